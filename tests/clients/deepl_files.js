// deepl_files.js - translateDocument into a file without deepl-node's double
// close. Given an output path, deepl-node 1.28.0 opens a FileHandle, writes
// through a WriteStream on the handle's descriptor (which closes it when
// done) and then closes the handle too: the second close lands on whatever
// file the process opened with that number in between (seen as
// "EBADF: bad file descriptor, fstat" in its next uploadDocument's read of
// the input). Given a WriteStream, it writes and the stream closes once.
'use strict';

const fs = require('node:fs');

// t.translateDocument(src, <out as a stream>, ...rest); resolves with its
// status once the file is closed.
async function translateDocumentTo(t, src, out, ...rest) {
  const ws = fs.createWriteStream(out, { flags: 'wx' });
  const closed = new Promise((resolve) => { ws.on('close', resolve); });
  try {
    return await t.translateDocument(src, ws, ...rest);
  } finally {
    if (!ws.writableEnded) ws.end();
    await closed;
  }
}

module.exports = { translateDocumentTo };
