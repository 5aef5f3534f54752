# Install-time AOT prebuild (docs/design.md, "Interfaces"): with KCACHE_AOT_PACK on
# (the default when ocloc is found) the build runs `kcache prebuild` for the
# device database's listed iGPUs and `cmake --install` (and the .deb) installs
# the pack under share/kcache/packs, where the runtime finds it unconfigured.
find_program(KCACHE_OCLOC ocloc)
if(KCACHE_OCLOC)
  set(kcache_aot_default ON)
else()
  set(kcache_aot_default OFF)
endif()
option(KCACHE_AOT_PACK "Prebuild and install the AOT pack for the listed iGPUs (needs ocloc)"
       ${kcache_aot_default})

if(KCACHE_AOT_PACK)
  if(NOT KCACHE_OCLOC)
    message(FATAL_ERROR "KCACHE_AOT_PACK is ON but ocloc was not found: install intel-opencl-icd "
                        "or configure with -DKCACHE_AOT_PACK=OFF")
  endif()
  cmake_host_system_information(RESULT kcache_cores QUERY NUMBER_OF_LOGICAL_CORES)
  set(KCACHE_AOT_PACK_FILE ${PROJECT_BINARY_DIR}/packs/kcache-listed-igpus.kcpack)
  add_custom_command(OUTPUT ${KCACHE_AOT_PACK_FILE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packs
    COMMAND ${CMAKE_COMMAND} -E rm -f ${KCACHE_AOT_PACK_FILE}
    COMMAND $<TARGET_FILE:kcache_cli> prebuild --output ${KCACHE_AOT_PACK_FILE}
            --jobs ${kcache_cores} --ocloc ${KCACHE_OCLOC} --quiet
    DEPENDS kcache_cli
    COMMENT "Prebuilding the AOT pack for the listed iGPUs with ocloc"
    VERBATIM)
  add_custom_target(kcache_aot_pack ALL DEPENDS ${KCACHE_AOT_PACK_FILE})
  install(FILES ${KCACHE_AOT_PACK_FILE} DESTINATION ${CMAKE_INSTALL_DATADIR}/kcache/packs)
endif()
