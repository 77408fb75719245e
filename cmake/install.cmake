# Installing vqsim (cmake --install build --prefix P) and packaging it (cpack -G DEB, from the
# build directory). The layout under P:
#   bin/vqsim
#   share/vqsim/scenarios/            the example scenarios and sweep specs (vqsim run default)
#   share/doc/vqsim/                  README.md, docs/ and the notebooks' figures README shows
#   share/man/man1/vqsim.1, vqsim-CMD.1  written at build time from `vqsim [CMD] --help`
#   share/bash-completion/completions/vqsim, and zsh's _vqsim (see below)
# The binary finds share/vqsim from its own location (cli/data_dir.cc); nothing of the source
# or build tree is compiled into it.
include(GNUInstallDirs)

# The build tree: build/vqsim looks for build/share/vqsim (the second place cli/data_dir.cc
# tries), which links to the source tree's scenarios/. A link, not a copy: an edited scenario
# is seen at once and no rule has to keep copies fresh; the link is made at configure time, so
# a build tree configured before this existed gets it from its next cmake run.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/vqsim)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/scenarios ${CMAKE_BINARY_DIR}/share/vqsim/scenarios SYMBOLIC)

install(TARGETS vqsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The fio job files that scenarios name (workload.fio_job) go with them.
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vqsim/scenarios FILES_MATCHING PATTERN "*.toml" PATTERN "*.fio")
# The docs keep their layout, so that README's links (docs/x.md, its pictures) and the --help
# texts' references to docs/ still name the right files.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY notebooks/figures DESTINATION ${CMAKE_INSTALL_DOCDIR}/notebooks FILES_MATCHING PATTERN "*.png")

# Man pages from the --help texts (cmake/man_pages.py), rebuilt whenever vqsim is; the script
# finds the commands in `vqsim --help`, so a new command gets its page without a change here.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(VQSIM_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  add_custom_command(
    OUTPUT ${VQSIM_MAN_DIR}/pages.stamp
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/man_pages.py $<TARGET_FILE:vqsim> ${VQSIM_MAN_DIR}
    COMMAND ${CMAKE_COMMAND} -E touch ${VQSIM_MAN_DIR}/pages.stamp
    DEPENDS vqsim ${PROJECT_SOURCE_DIR}/cmake/man_pages.py
    COMMENT "Writing the man pages from vqsim --help"
    VERBATIM)
  add_custom_target(vqsim_man ALL DEPENDS ${VQSIM_MAN_DIR}/pages.stamp)
  install(DIRECTORY ${VQSIM_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
else()
  message(WARNING "vqsim: no Python 3, so no man pages (cmake/man_pages.py writes them)")
endif()

# Shell completion. bash-completion looks in share/bash-completion/completions under /usr, under
# /usr/local and next to the command's own bin/. zsh: share/zsh/site-functions is upstream's
# directory and is in Debian's fpath under /usr/local; under /usr, Debian's zsh reads packages'
# completions from share/zsh/vendor-completions instead. The choice is made when installing,
# because `cmake --install --prefix` and CPack (which installs under <staging>/usr) pick the
# prefix then.
install(FILES completions/vqsim.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME vqsim)
install(CODE [[
  if(CMAKE_INSTALL_PREFIX MATCHES "(^|/)usr/?$")
    set(VQSIM_ZSH_COMPLETION_DIR vendor-completions)
  else()
    set(VQSIM_ZSH_COMPLETION_DIR site-functions)
  endif()
]])
install(FILES completions/_vqsim DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/\${VQSIM_ZSH_COMPLETION_DIR})

# The Debian package: cpack -G DEB (or plain cpack) in the build directory writes
# vqsim_VERSION_ARCH.deb. Its Depends are what dpkg-shlibdeps finds the binary links (Boost,
# libstdc++, Open MPI when built with it), nothing listed by hand.
set(VQSIM_DEB_MAINTAINER "vqsim maintainers <vqsim@invalid>"
    CACHE STRING "Maintainer field of the .deb (Name <e-mail>); the default is a placeholder")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vqsim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "vqsim simulates the storage I/O path of QEMU/KVM virtual machines, from fio in the guest "
    "through the virtio drivers, the virtqueues, QEMU's emulation and IOThreads and the host's "
    "block layer to the device, and predicts fio's figures (IOPS, bandwidth, latency "
    "percentiles) with 95% intervals. It checks fio results for plausibility, calibrates its "
    "stage parameters to measured fio runs, compares what-if alternatives on common random "
    "numbers, sweeps parameter grids and goal-seeks a knob under latency constraints.")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${VQSIM_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
include(CPack)
