# Installing vqsim (cmake --install build --prefix P). The layout under P:
#   bin/vqsim
#   share/vqsim/scenarios/            the example scenarios and sweep specs (vqsim run default)
#   share/doc/vqsim/                  README.md, docs/ and the notebooks' figures README shows
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
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vqsim/scenarios FILES_MATCHING PATTERN "*.toml")
# The docs keep their layout, so that README's links (docs/x.md, its pictures) and the --help
# texts' references to docs/ still name the right files.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY notebooks/figures DESTINATION ${CMAKE_INSTALL_DOCDIR}/notebooks FILES_MATCHING PATTERN "*.png")
