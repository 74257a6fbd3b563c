# Every dependency is a Debian 12 package; scripts/install-deps.sh installs them.
find_package(Threads REQUIRED)
find_package(Boost 1.81 REQUIRED CONFIG COMPONENTS json program_options)
find_package(OpenSSL 3 REQUIRED)
find_package(RocksDB REQUIRED CONFIG)
find_package(Protobuf REQUIRED)
find_package(spdlog REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(prometheus-cpp REQUIRED CONFIG)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECP256K1 REQUIRED IMPORTED_TARGET libsecp256k1)

# The node and the benchmarks allocate through jemalloc, linked in whole from Debian's static
# archive (libjemalloc-dev), so that the binary needs no allocator package at run time. Sanitizer
# builds keep the C library's allocator, which their runtimes replace.
if(GRIDLEDGER_JEMALLOC)
    find_library(GRIDLEDGER_JEMALLOC_ARCHIVE NAMES libjemalloc_pic.a REQUIRED)
    add_library(gridledger_allocator INTERFACE)
    target_link_libraries(gridledger_allocator INTERFACE
        "$<LINK_LIBRARY:WHOLE_ARCHIVE,${GRIDLEDGER_JEMALLOC_ARCHIVE}>" Threads::Threads
        ${CMAKE_DL_LIBS} m)
    # Its settings (src/allocator/malloc_conf.cpp) compile into each program that links it: a
    # definition in a library's archive would be left out, since no code refers to it.
    target_sources(gridledger_allocator INTERFACE
        "${PROJECT_SOURCE_DIR}/src/allocator/malloc_conf.cpp")
else()
    add_library(gridledger_allocator INTERFACE)
endif()
