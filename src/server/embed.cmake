# embed.cmake -DIN=file -DOUT=file.c: writes `const char fy_openapi_json[]`
# holding the bytes of IN (NUL-terminated), as a byte array so any content
# survives.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Generated from openapi.json by embed.cmake; do not edit. */\n"
                  "const char fy_openapi_json[] = {${bytes} 0x00};\n")
