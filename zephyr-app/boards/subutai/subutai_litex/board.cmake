# The board is a Verilator model of the SoC of SUBUTAI_SOC_DIR (boards/sim.py builds it): `ninja
# run`, and so twister, boots the image on every tile of that model and prints its console. The
# model's mesh comes from its csr.json, as the board's devicetree does (cmake/subutai.cmake).
set(SUPPORTED_EMU_PLATFORMS custom)

# The simulated cycles a run may take before it is stopped (boards/sim.py exits 124 then):
# boards/zephyr.py's default, which pthreadtest's 95 M cycles fit.
set(SUBUTAI_MAX_CYCLES 200000000 CACHE STRING "Simulated cycles a run of the board may take")

file(READ ${SUBUTAI_SOC_DIR}/csr.json subutai_csr_json)
string(JSON subutai_mesh_x GET ${subutai_csr_json} constants mesh_x)
string(JSON subutai_mesh_y GET ${subutai_csr_json} constants mesh_y)
add_custom_target(run_custom
  COMMAND ${Python3_EXECUTABLE} ${SUBUTAI_ROOT}/boards/sim.py
          --mesh ${subutai_mesh_x}x${subutai_mesh_y} --output-dir ${SUBUTAI_SOC_DIR}
          --ram-init ${APPLICATION_BINARY_DIR}/zephyr/zephyr.bin --max-cycles ${SUBUTAI_MAX_CYCLES}
  DEPENDS ${logical_target_for_zephyr_elf}
  WORKING_DIRECTORY ${APPLICATION_BINARY_DIR}
  USES_TERMINAL)
