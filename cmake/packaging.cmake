# Install rules and the Debian packages (issue 18): `cpack -G DEB` in a build
# directory makes build/packages/clustercert-agent_<ver>_<arch>.deb and
# clustercert-controller_<ver>_<arch>.deb from what that build holds. It
# packages the binaries already built; it builds nothing (scripts/build.sh
# --only node-agent controller collective-worker-gloo first, and
# collective-worker-nccl in a CUDA build to ship the NCCL worker).
#
# Paths are Debian's, for prefix /usr: the agent and its workers in
# /usr/lib/clustercert (the agent finds its workers beside its own resolved
# /proc/self/exe, so the /usr/sbin/node-agent symlink works and the workers
# stay off PATH), the controller in /usr/bin. The unit, udev rule and
# /etc files have absolute destinations because the unit names them, so
# install the agent by hand with `cmake --install build --prefix /usr
# --component agent` (the unit's ExecStart is /usr/sbin/node-agent).
# scripts/package_test.sh installs both packages, runs them and purges them.

# --- clustercert-agent ---
install(TARGETS node-agent RUNTIME DESTINATION lib/clustercert COMPONENT agent)
if(TARGET collective-worker-gloo)
  install(TARGETS collective-worker-gloo RUNTIME DESTINATION lib/clustercert COMPONENT agent)
endif()
# A CUDA build has the NCCL worker's target, but CI's build may not have
# built it: the package then ships without it (package_test.sh says which
# workers it holds) rather than failing.
if(TARGET collective-worker-nccl)
  install(TARGETS collective-worker-nccl RUNTIME DESTINATION lib/clustercert COMPONENT agent
          OPTIONAL)
endif()
# The CUDA runtime and NCCL live outside the system's library directories
# (/usr/local/cuda/lib), where the build tree's RUNPATH points: the
# installed binaries keep that RUNPATH instead of depending on ld.so.conf.
foreach(cuda_user IN ITEMS node-agent collective-worker-nccl)
  if(TARGET ${cuda_user} AND CLUSTERCERT_HAVE_CUDA)
    set_target_properties(${cuda_user} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()

file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/packaging)
file(CREATE_LINK ../lib/clustercert/node-agent ${CMAKE_BINARY_DIR}/packaging/node-agent SYMBOLIC)
install(FILES ${CMAKE_BINARY_DIR}/packaging/node-agent DESTINATION sbin COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/clustercert-agent.service
        DESTINATION /lib/systemd/system COMPONENT agent)
# Lets the agent's group read the NICs' and GPUs' PCI VPD (serial numbers).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/99-clustercert-vpd.rules
        DESTINATION /lib/udev/rules.d COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/clustercert-agent.default
        DESTINATION /etc/default RENAME clustercert-agent COMPONENT agent)
# The keys' directory, empty: the keys are the site's (deploy/pki.sh), never
# the package's. postinst gives it to root:clustercert 0750.
install(DIRECTORY DESTINATION /etc/clustercert COMPONENT agent)

# --- clustercert-controller ---
install(TARGETS controller RUNTIME DESTINATION bin COMPONENT controller)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION share/doc/clustercert-controller COMPONENT controller)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/clustercert-controller
        COMPONENT controller FILES_MATCHING PATTERN "*.md" PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plans/ DESTINATION share/clustercert/plans
        COMPONENT controller FILES_MATCHING PATTERN "*.yaml")
install(FILES ${PROJECT_SOURCE_DIR}/deploy/prometheus/clustercert.rules.yml
        DESTINATION share/clustercert/prometheus COMPONENT controller)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/pki.sh
        DESTINATION share/clustercert COMPONENT controller)

# --- CPack: two Debian packages ---
set(CLUSTERCERT_PACKAGE_MAINTAINER "clustercert maintainers <clustercert@localhost>"
    CACHE STRING "Maintainer field of the Debian packages: the site's contact")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME clustercert)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${CLUSTERCERT_PACKAGE_MAINTAINER}")
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL agent controller)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps names the Debian packages of the libraries the binaries
# load. CPack runs it with --ignore-missing-info, so a library no package
# owns (the CUDA runtime and NCCL from /usr/local/cuda) is left out of
# Depends instead of failing the build; the agent's description says what
# it then needs.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME clustercert-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "ibverbs-providers, rdma-core")
set(agent_description "clustercert node-agent, run on every node of the cluster
The agent answers the clustercert controller over gRPC with mutual TLS on the
management network: inventory, pairwise RDMA and TCP tests, collective
sweeps (gloo; NCCL on GPU hosts) and uplink flows. The package installs the
systemd unit clustercert-agent.service and enables it once
/etc/clustercert holds agent.pem, agent.key and ca.pem and
/etc/default/clustercert-agent sets MGMT_ADDR.")
if(CLUSTERCERT_HAVE_CUDA)
  string(APPEND agent_description "
Built with CUDA ${CUDAToolkit_VERSION}: the agent needs libcudart from
${CUDAToolkit_LIBRARY_DIR} (and the NCCL worker libnccl), which no Debian
package provides and which dpkg does not check. For hosts without CUDA,
package a build configured with -DCLUSTERCERT_WITH_CUDA=OFF.")
endif()
set(CPACK_DEBIAN_AGENT_DESCRIPTION "${agent_description}")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/agent/conffiles
    ${PROJECT_SOURCE_DIR}/deploy/debian/agent/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/agent/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/agent/postrm)

set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME clustercert-controller)
# pki.sh (in /usr/share/clustercert) runs openssl.
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_RECOMMENDS "openssl")
set(CPACK_DEBIAN_CONTROLLER_DESCRIPTION "clustercert controller: certifies a GPU/RDMA cluster
The controller reads a YAML plan, drives the clustercert node-agents through
inventory, pairwise, collective and uplink phases, and writes a signed
certificate with HTML, Markdown and JUnit reports. Example plans are in
/usr/share/clustercert/plans, the PKI script in /usr/share/clustercert,
the documentation in /usr/share/doc/clustercert-controller.")

include(CPack)
