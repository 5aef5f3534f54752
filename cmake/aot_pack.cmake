# Install-time AOT prebuild (docs/design.md, "Interfaces"): with KCACHE_AOT_PACK on
# (the default when ocloc is found) the build runs `kcache prebuild` for the
# device database's listed iGPUs and `cmake --install` (and the .deb) installs
# the pack under share/kcache/packs, where the runtime finds it unconfigured.
# -DKCACHE_PACK_SIGNING_KEY=FILE also signs it (PACK.minisig, installed beside it).
find_program(KCACHE_OCLOC ocloc)
if(KCACHE_OCLOC)
  set(kcache_aot_default ON)
else()
  set(kcache_aot_default OFF)
endif()
option(KCACHE_AOT_PACK "Prebuild and install the AOT pack for the listed iGPUs (needs ocloc)"
       ${kcache_aot_default})
# With a secret key (`kcache keygen` or `minisign -G -W`), the pack is signed:
# PACK.minisig is built and installed beside it (and so shipped in the .deb).
set(KCACHE_PACK_SIGNING_KEY "" CACHE FILEPATH
    "Unencrypted minisign secret key that signs the AOT pack (empty: unsigned)")

if(KCACHE_AOT_PACK)
  if(NOT KCACHE_OCLOC)
    message(FATAL_ERROR "KCACHE_AOT_PACK is ON but ocloc was not found: install intel-opencl-icd "
                        "or configure with -DKCACHE_AOT_PACK=OFF")
  endif()
  cmake_host_system_information(RESULT kcache_cores QUERY NUMBER_OF_LOGICAL_CORES)
  set(KCACHE_AOT_PACK_FILE ${PROJECT_BINARY_DIR}/packs/kcache-listed-igpus.kcpack)
  set(kcache_pack_outputs ${KCACHE_AOT_PACK_FILE})
  set(kcache_sign_args "")
  if(KCACHE_PACK_SIGNING_KEY)
    get_filename_component(kcache_signing_key "${KCACHE_PACK_SIGNING_KEY}" ABSOLUTE
                           BASE_DIR ${PROJECT_BINARY_DIR})
    if(NOT EXISTS "${kcache_signing_key}")
      message(FATAL_ERROR "KCACHE_PACK_SIGNING_KEY: no such file: ${kcache_signing_key}")
    endif()
    set(kcache_sign_args --sign ${kcache_signing_key})
    list(APPEND kcache_pack_outputs ${KCACHE_AOT_PACK_FILE}.minisig)
  endif()
  add_custom_command(OUTPUT ${kcache_pack_outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packs
    COMMAND ${CMAKE_COMMAND} -E rm -f ${KCACHE_AOT_PACK_FILE} ${KCACHE_AOT_PACK_FILE}.minisig
    COMMAND $<TARGET_FILE:kcache_cli> prebuild --output ${KCACHE_AOT_PACK_FILE}
            --jobs ${kcache_cores} --ocloc ${KCACHE_OCLOC} --quiet ${kcache_sign_args}
    DEPENDS kcache_cli ${kcache_signing_key}
    COMMENT "Prebuilding the AOT pack for the listed iGPUs with ocloc"
    VERBATIM)
  add_custom_target(kcache_aot_pack ALL DEPENDS ${kcache_pack_outputs})
  install(FILES ${kcache_pack_outputs} DESTINATION ${CMAKE_INSTALL_DATADIR}/kcache/packs)
endif()
