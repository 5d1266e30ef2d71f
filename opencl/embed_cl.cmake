# iwpp_embed_cl(<output.c> <file.cl>...)
# Generates <output.c> holding each .cl file as a NUL-terminated char array
# iwpp_ocl_src_<stem>[] (bytes written in hex, so no escaping is needed), and
# regenerates it whenever one of the .cl files changes.
function(iwpp_embed_cl out)
  set(deps "")
  foreach(f ${ARGN})
    list(APPEND deps ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSRC_DIR=${CMAKE_CURRENT_SOURCE_DIR}
            "-DFILES=${ARGN}" -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_cl.cmake
    DEPENDS ${deps} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_cl.cmake
    COMMENT "Embedding OpenCL kernels"
    VERBATIM)
endfunction()

# Script mode: cmake -DOUT=... -DSRC_DIR=... -DFILES=a.cl;b.cl -P embed_cl.cmake
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED OUT)
  set(text "/* Generated from the .cl files by embed_cl.cmake; do not edit. */\n")
  foreach(f ${FILES})
    get_filename_component(stem ${f} NAME_WE)
    file(READ ${SRC_DIR}/${f} hex HEX)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
    string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
    string(APPEND text "const char iwpp_ocl_src_${stem}[] = {\n${hex}0x00};\n")
  endforeach()
  file(WRITE ${OUT}.tmp "${text}")
  file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
  file(REMOVE ${OUT}.tmp)
endif()
