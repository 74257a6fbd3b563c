# Compiler warnings shared by every target of the project.
add_library(gridledger_warnings INTERFACE)
target_compile_options(gridledger_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Woverloaded-virtual)
# GCC 12 at -O3 (the Release build) reports out-of-bounds, overlapping and uninitialized accesses
# inside inlined std::vector, std::string and std::optional code that no input can reach (a
# push_back followed by an insert, a string concatenation, an optional<vector> moved twice). The
# same four warnings stay on in the -O2 builds of the tests and sanitizers, which fail on any.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(gridledger_warnings INTERFACE
        "$<$<CONFIG:Release>:-Wno-array-bounds;-Wno-restrict;-Wno-stringop-overread;-Wno-maybe-uninitialized>")
endif()
if(GRIDLEDGER_WERROR)
    target_compile_options(gridledger_warnings INTERFACE -Werror)
endif()

# gridledger_unity(<target>...)
#
# With GRIDLEDGER_UNITY_BUILD, each target's sources compile in batches of eight per compiler run
# (CMake's unity build, in the order of its source list), which parses their shared headers once
# per batch: make test's two builds use it, for the libraries and the unit and simulator test
# executables. The sources of a batch share one translation unit, so their file-local names must
# differ; a clash fails that build as a redefinition or an ambiguous call. Library sources give
# such names distinct spellings; each test source keeps its names in a namespace named after the
# file (gridledger::contracts::stake_test).
function(gridledger_unity)
    if(GRIDLEDGER_UNITY_BUILD)
        set_target_properties(${ARGN} PROPERTIES UNITY_BUILD ON)
    endif()
endfunction()

# gridledger_module(<name> [DEPS <targets>...])
#
# Declares the static library gridledger::<name> built from the *.cpp files of the calling folder.
# Its public headers live in include/gridledger/<name>/.
function(gridledger_module name)
    cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
    file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
    if(NOT sources)
        # A floor with no sources yet still exposes its headers.
        add_library(gridledger_${name} INTERFACE)
        add_library(gridledger::${name} ALIAS gridledger_${name})
        target_include_directories(gridledger_${name} INTERFACE "${PROJECT_SOURCE_DIR}/include")
        target_link_libraries(gridledger_${name} INTERFACE ${ARG_DEPS})
        return()
    endif()
    add_library(gridledger_${name} STATIC ${sources})
    add_library(gridledger::${name} ALIAS gridledger_${name})
    gridledger_unity(gridledger_${name})
    target_include_directories(gridledger_${name} PUBLIC "${PROJECT_SOURCE_DIR}/include")
    target_link_libraries(gridledger_${name}
        PUBLIC ${ARG_DEPS}
        PRIVATE gridledger_warnings ${ARG_PRIVATE_DEPS})
endfunction()

# gridledger_test_executable(<name> DEPS <targets>... SOURCES <files>...)
#
# A GoogleTest executable of the project's tests, with no ctest entry of its own.
function(gridledger_test_executable name)
    cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE gridledger_warnings ${ARG_DEPS} GTest::gtest_main)
    target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
    # A test's own sources set up cases and assert; the code under test, the simulator and the
    # test support library keep the build's optimisation. At -Og the test sources of make test's
    # plain build (RelWithDebInfo at -O2) compile in about two thirds of the time -O2 takes; its
    # sanitizer build compiles everything at -Og (Makefile).
    target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo>:-Og>)
endfunction()

# gridledger_add_test(<test> <label> <timeout> <command>...)
#
# The ctest entry <test>, running <command>, with its label and its time limit in seconds (600
# when <timeout> is empty).
function(gridledger_add_test test label timeout)
    if(NOT timeout)
        set(timeout 600)
    endif()
    add_test(NAME ${test} COMMAND ${ARGN})
    set_tests_properties(${test} PROPERTIES LABELS "${label}" TIMEOUT ${timeout})
endfunction()

# gridledger_test(<name> LABEL <label> [TIMEOUT <seconds>] DEPS <targets>... SOURCES <files>...)
#
# A test executable that ctest runs as one entry of the same name.
function(gridledger_test name)
    cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "DEPS;SOURCES" ${ARGN})
    gridledger_test_executable(${name} DEPS ${ARG_DEPS} SOURCES ${ARG_SOURCES})
    gridledger_add_test(${name} "${ARG_LABEL}" "${ARG_TIMEOUT}" ${name})
endfunction()

# gridledger_test_group(<name> LABEL <label> [TIMEOUT <seconds>]
#                       DEPS <targets>... SOURCES <files>...)
#
# One test executable of several sources, linked once instead of once per source, where each
# source is its own ctest entry: named after the file (network_test.cpp: network_test), it runs
# the test suites that file declares (--gtest_filter=FourValidators.*). The suites are read from
# the sources' TEST and TEST_F lines at configure time (an edit of a source configures again, so
# that a suite it gains runs), and a suite belongs to one source only; parameterised and typed
# tests, whose full names carry a prefix, are refused.
function(gridledger_test_group name)
    cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "DEPS;SOURCES" ${ARGN})
    gridledger_test_executable(${name} DEPS ${ARG_DEPS} SOURCES ${ARG_SOURCES})
    foreach(source ${ARG_SOURCES})
        get_filename_component(test ${source} NAME_WE)
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
        file(STRINGS ${source} lines REGEX "^(TYPED_)?TEST(_F|_P)?\\(")
        set(suites "")
        foreach(line ${lines})
            if(NOT line MATCHES "^TEST(_F)?\\(([A-Za-z0-9_]+),")
                message(FATAL_ERROR "${source}: gridledger_test_group takes TEST and TEST_F only")
            endif()
            list(APPEND suites ${CMAKE_MATCH_2})
        endforeach()
        list(REMOVE_DUPLICATES suites)
        if(NOT suites)
            message(FATAL_ERROR "${source}: no TEST or TEST_F at the start of a line")
        endif()
        foreach(suite ${suites})
            if(DEFINED owner_${suite})
                message(FATAL_ERROR
                    "test suite ${suite} is declared in ${owner_${suite}} and ${source}")
            endif()
            set(owner_${suite} ${source})
        endforeach()
        list(TRANSFORM suites APPEND ".*")
        list(JOIN suites ":" filter)
        gridledger_add_test(${test} "${ARG_LABEL}" "${ARG_TIMEOUT}"
            ${name} --gtest_filter=${filter})
    endforeach()
endfunction()
