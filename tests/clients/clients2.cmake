# LibreTranslate (npm libretranslate and translate, its web page's requests),
# Immersive Translate and Kiss Translator (their request code's shapes), and
# the OpenAI-compatible API (the official openai SDK; the requests of
# openai-translator, pot-desktop and Bob).
foreach(client libretranslate translate libre_webui openai immersive kiss)
  fy_script_test(clients_${client}
    COMMAND ${FANYI_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/test_${client}.js
    LABELS "server;clients" TIMEOUT 600)
  set_tests_properties(clients_${client} PROPERTIES FIXTURES_REQUIRED synth_models)
endforeach()
