# Set-up of a Zephyr application for the Subutai SoC. Include it before find_package(Zephyr):
#
#   include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/subutai.cmake)
#   find_package(Zephyr REQUIRED HINTS $ENV{ZEPHYR_BASE})
#
# SUBUTAI_SOC_DIR (CMake or environment variable) is the LiteX build directory of the SoC the image
# is for (e.g. build/sim_2x2_standard_i8k2way): its csr.json becomes the board's devicetree and its
# generated headers give the drivers their registers. BOARD defaults to subutai_litex.

get_filename_component(SUBUTAI_ZEPHYR_APP ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
get_filename_component(SUBUTAI_ROOT ${SUBUTAI_ZEPHYR_APP}/.. ABSOLUTE)

if(NOT DEFINED SUBUTAI_SOC_DIR AND DEFINED ENV{SUBUTAI_SOC_DIR})
  set(SUBUTAI_SOC_DIR $ENV{SUBUTAI_SOC_DIR})
endif()
if(NOT SUBUTAI_SOC_DIR)
  message(FATAL_ERROR "SUBUTAI_SOC_DIR is not set: give the SoC build directory, "
    "e.g. -DSUBUTAI_SOC_DIR=build/sim_2x2_standard_i8k2way (python3 boards/sim.py --tiles 4 --build makes one)")
endif()
get_filename_component(SUBUTAI_SOC_DIR ${SUBUTAI_SOC_DIR} ABSOLUTE BASE_DIR ${SUBUTAI_ROOT})
if(NOT EXISTS ${SUBUTAI_SOC_DIR}/csr.json)
  message(FATAL_ERROR "SUBUTAI_SOC_DIR=${SUBUTAI_SOC_DIR} has no csr.json: build the SoC first "
    "(python3 boards/sim.py --tiles 4 --build)")
endif()
set(SUBUTAI_SOC_DIR ${SUBUTAI_SOC_DIR} CACHE PATH "LiteX build directory of the Subutai SoC")
set(SUBUTAI_CODE_SIZE 0x60000 CACHE STRING "Bytes of main RAM for the image; the rest is shared")

if(NOT BOARD)
  set(BOARD subutai_litex)
endif()
# The module: as an extra module of a west workspace, or as the only module without one.
execute_process(COMMAND west topdir RESULT_VARIABLE subutai_no_west OUTPUT_QUIET ERROR_QUIET)
if(subutai_no_west AND NOT ZEPHYR_MODULES)
  set(ZEPHYR_MODULES ${SUBUTAI_ZEPHYR_APP})
else()
  list(APPEND ZEPHYR_EXTRA_MODULES ${SUBUTAI_ZEPHYR_APP})
endif()
list(APPEND BOARD_ROOT ${SUBUTAI_ZEPHYR_APP})

# The board's devicetree, from the SoC's csr.json.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(SUBUTAI_DTS_ROOT ${CMAKE_BINARY_DIR}/subutai)
file(MAKE_DIRECTORY ${SUBUTAI_DTS_ROOT}/dts/riscv)
execute_process(
  COMMAND ${Python3_EXECUTABLE} ${SUBUTAI_ZEPHYR_APP}/scripts/gen_soc_dtsi.py
          ${SUBUTAI_SOC_DIR}/csr.json ${SUBUTAI_DTS_ROOT}/dts/riscv/subutai_soc.dtsi
          --code-size ${SUBUTAI_CODE_SIZE}
  RESULT_VARIABLE subutai_dts_result)
if(NOT subutai_dts_result EQUAL 0)
  message(FATAL_ERROR "cannot generate the devicetree from ${SUBUTAI_SOC_DIR}/csr.json")
endif()
list(APPEND DTS_ROOT ${SUBUTAI_DTS_ROOT})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${SUBUTAI_SOC_DIR}/csr.json ${SUBUTAI_ZEPHYR_APP}/scripts/gen_soc_dtsi.py)

# Debian's riscv64-unknown-elf-gcc has an rv32im multilib but no rv32im_zicsr_zifencei one, so
# for Zephyr's -march it would link the default 64-bit libgcc. A specs file adds the mapping.
if(NOT DEFINED ZEPHYR_TOOLCHAIN_VARIANT AND DEFINED ENV{ZEPHYR_TOOLCHAIN_VARIANT})
  set(ZEPHYR_TOOLCHAIN_VARIANT $ENV{ZEPHYR_TOOLCHAIN_VARIANT})
endif()
if(NOT DEFINED CROSS_COMPILE AND DEFINED ENV{CROSS_COMPILE})
  set(CROSS_COMPILE $ENV{CROSS_COMPILE})
endif()
if(ZEPHYR_TOOLCHAIN_VARIANT STREQUAL "cross-compile" AND CROSS_COMPILE)
  # What Zephyr cannot ask a cross-compile toolchain: gcc has thread-local storage (the benchmark
  # harness counts per thread) and GNU extensions.
  set(subutai_toolchain_conf ${CMAKE_BINARY_DIR}/subutai/cross-compile.conf)
  file(WRITE ${subutai_toolchain_conf}
    "CONFIG_TOOLCHAIN_CROSS_COMPILE_SUPPORTS_THREAD_LOCAL_STORAGE=y\n"
    "CONFIG_TOOLCHAIN_CROSS_COMPILE_SUPPORTS_GNU_EXTENSIONS=y\n")
  list(APPEND EXTRA_CONF_FILE ${subutai_toolchain_conf})
  # Zephyr looks for picolibc.h under the toolchain's directory, which a compiler of /usr/bin
  # does not have; the compiler itself says whether it has picolibc (the full C library that
  # programs of one's own get, apps/program).
  execute_process(
    COMMAND ${CROSS_COMPILE}gcc -print-file-name=picolibc.specs
    OUTPUT_VARIABLE subutai_picolibc_specs OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(IS_ABSOLUTE "${subutai_picolibc_specs}")
    set(TOOLCHAIN_HAS_PICOLIBC ON CACHE BOOL "True if toolchain supports picolibc")
  endif()
  execute_process(
    COMMAND ${CROSS_COMPILE}gcc -march=rv32im_zicsr_zifencei -mabi=ilp32 --print-multi-directory
    OUTPUT_VARIABLE subutai_multilib OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE subutai_gcc_result)
  if(NOT subutai_gcc_result EQUAL 0)
    message(FATAL_ERROR "${CROSS_COMPILE}gcc does not run: install the Debian package "
      "gcc-riscv64-unknown-elf (make setup)")
  endif()
  if(subutai_multilib STREQUAL ".")
    execute_process(COMMAND ${CROSS_COMPILE}gcc -dumpspecs OUTPUT_VARIABLE subutai_specs)
    string(REGEX MATCH "\\*multilib_matches:\n[^\n]*" subutai_matches "${subutai_specs}")
    if(NOT subutai_matches)
      message(FATAL_ERROR "${CROSS_COMPILE}gcc -dumpspecs has no multilib_matches")
    endif()
    set(subutai_specs_file ${CMAKE_BINARY_DIR}/subutai/rv32im-zicsr.specs)
    file(WRITE ${subutai_specs_file}
      "${subutai_matches}march=rv32im_zicsr_zifencei march=rv32im;\n\n")
    # ccache hashes a -specs file by its modification time. This one follows from the compiler
    # alone, so it takes the compiler's: then every build directory, whose configure writes the
    # file anew, reuses the objects cached by the others.
    find_program(subutai_gcc ${CROSS_COMPILE}gcc REQUIRED)
    execute_process(COMMAND touch -r ${subutai_gcc} ${subutai_specs_file} COMMAND_ERROR_IS_FATAL ANY)
    list(APPEND TOOLCHAIN_C_FLAGS -specs=${subutai_specs_file})
    list(APPEND TOOLCHAIN_LD_FLAGS -specs=${subutai_specs_file})
    message(STATUS "Subutai: ${CROSS_COMPILE}gcc maps rv32im_zicsr_zifencei to its rv32im multilib "
      "(${subutai_specs_file})")
  endif()
endif()

# An application of the Subutai PThreads library: its main runs as the main thread on core 0
# (renamed at compile time, the source is not changed).
function(subutai_application target)
  target_compile_definitions(${target} PRIVATE main=subutai_app_main _POSIX_C_SOURCE=200809L)
endfunction()
