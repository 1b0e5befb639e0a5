// bergamot_peer.cpp - a benchmark peer, not part of Fanyi: native
// bergamot-translator timed from inside, so its model load (done when the
// first batch arrives, seconds and noisy) is not in the figures. Reads
// stdin's lines; translates the first alone (the load), then the rest,
// timed: BERGAMOT_PEER=single sends each line as its own request and waits
// for it (a user typing), BERGAMOT_PEER=batched (the default) sends them as
// one request, which the service batches over --cpu-threads workers. Prints
// the translations to stdout and "bergamot_peer: N lines S seconds" to
// stderr. Options as app/bergamot's: --model-config-paths FILE.yml.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "translator/parser.h"
#include "translator/response.h"
#include "translator/response_options.h"
#include "translator/service.h"
#include "translator/utils.h"

using namespace marian::bergamot;

static std::string translate(AsyncService &service, std::shared_ptr<TranslationModel> &model, std::string text) {
  std::promise<Response> done;
  std::future<Response> future = done.get_future();
  service.translate(model, std::move(text), [&done](Response &&r) { done.set_value(std::move(r)); },
                    ResponseOptions());
  return future.get().target.text;
}

int main(int argc, char *argv[]) {
  ConfigParser<AsyncService> parser("bergamot_peer", /*multiOpMode=*/false);
  parser.parseArgs(argc, argv);
  auto &config = parser.getConfig();
  AsyncService service(config.serviceConfig);
  auto model = service.createCompatibleModel(parseOptionsFromFilePath(config.modelConfigPaths.front()));
  const char *mode = std::getenv("BERGAMOT_PEER");
  const bool single = mode && !std::strcmp(mode, "single");

  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
  if (lines.empty()) return 0;
  std::cout << translate(service, model, lines[0]) << '\n';

  auto t0 = std::chrono::steady_clock::now();
  if (single) {
    for (size_t i = 1; i < lines.size(); i++) std::cout << translate(service, model, lines[i]) << '\n';
  } else if (lines.size() > 1) {
    std::string rest;
    for (size_t i = 1; i < lines.size(); i++) rest += lines[i] + '\n';
    std::cout << translate(service, model, std::move(rest));
  }
  std::cout.flush();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "bergamot_peer: " << lines.size() - 1 << " lines " << s << " seconds\n";
  return 0;
}
