# Installs the CMake package (find_package(unirecord CONFIG)) and the
# pkg-config file. Included by the top-level CMakeLists.txt after every layer
# has added its sources, so the dependency list below is complete.
include(CMakePackageConfigHelpers)

set(UNIRECORD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/unirecord)

# libunirecord is static: its private dependencies are link dependencies of
# its users. The package config re-creates the pkg-config targets it links,
# by the module name pkg_check_modules recorded (<PREFIX>_MODULE_NAME).
get_target_property(unirecord_links unirecord LINK_LIBRARIES)
set(UNIRECORD_FIND_PKGCONFIG "")
set(UNIRECORD_PC_REQUIRES "")
set(UNIRECORD_PC_SHARED_LIBS "")
foreach(lib IN LISTS unirecord_links)
  if(lib MATCHES "^PkgConfig::(.+)$")
    set(prefix ${CMAKE_MATCH_1})
    set(module "${${prefix}_MODULE_NAME}")
    if(NOT module)
      message(FATAL_ERROR "cmake/install.cmake: PkgConfig::${prefix} was not made by a "
                          "single-module pkg_check_modules; its module name is unknown")
    endif()
    string(APPEND UNIRECORD_FIND_PKGCONFIG
           "if(NOT TARGET PkgConfig::${prefix})\n"
           "  pkg_check_modules(${prefix} REQUIRED QUIET IMPORTED_TARGET GLOBAL ${module})\n"
           "endif()\n")
    if(prefix MATCHES "^(CURL|AVFORMAT|AVCODEC|AVUTIL|SWSCALE|SWRESAMPLE)$")
      # libcurl's and FFmpeg's own Libs.private (ssh2, psl, ldap; vpx, aom,
      # bluray, zmq, ...) have no static libraries on Debian, nor their -dev
      # links: `pkg-config --static unirecord` links these shared libraries
      # instead of that closure.
      string(REGEX REPLACE "^lib" "" shared_name "${module}")
      string(APPEND UNIRECORD_PC_SHARED_LIBS " -l${shared_name}")
    else()
      string(APPEND UNIRECORD_PC_REQUIRES " ${module}")
    endif()
  endif()
endforeach()
foreach(lib IN LISTS unirecord_links)
  # "::@(...)" entries are CMake's markers for links added from other directories.
  if(lib MATCHES "::" AND NOT lib MATCHES "^(::@|PkgConfig::|flatbuffers::flatbuffers$|roaring::roaring$|CUDA::cudart$|Threads::Threads$)")
    message(WARNING "cmake/install.cmake: unirecord links ${lib}; the installed package "
                    "(cmake/unirecordConfig.cmake.in) does not find it yet")
  endif()
endforeach()
set(UNIRECORD_NEEDS_FLATBUFFERS OFF)
if(TARGET flatbuffers::flatbuffers AND "flatbuffers::flatbuffers" IN_LIST unirecord_links)
  set(UNIRECORD_NEEDS_FLATBUFFERS ON)
  string(APPEND UNIRECORD_PC_REQUIRES " flatbuffers")
endif()
# CRoaring has a CMake package but no .pc file: its library goes in Libs.private.
set(UNIRECORD_NEEDS_ROARING OFF)
if("roaring::roaring" IN_LIST unirecord_links)
  set(UNIRECORD_NEEDS_ROARING ON)
  string(APPEND UNIRECORD_PC_SHARED_LIBS " -lroaring")
endif()
set(UNIRECORD_PC_LIBS_PRIVATE "-pthread${UNIRECORD_PC_SHARED_LIBS}")
if(UNIRECORD_WITH_CUDA)
  string(APPEND UNIRECORD_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()

install(EXPORT unirecordTargets NAMESPACE unirecord:: DESTINATION ${UNIRECORD_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/unirecordConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/unirecordConfig.cmake
  INSTALL_DESTINATION ${UNIRECORD_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/unirecordConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/unirecordConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/unirecordConfigVersion.cmake
        DESTINATION ${UNIRECORD_CMAKE_DIR})

# The .pc file finds its prefix from its own place, so that an installed tree
# can be moved (and `cmake --install --prefix` works after configuring).
file(RELATIVE_PATH UNIRECORD_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${CMAKE_CURRENT_LIST_DIR}/unirecord.pc.in ${CMAKE_CURRENT_BINARY_DIR}/unirecord.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/unirecord.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
