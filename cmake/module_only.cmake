# DPSOSP_MODULE_ONLY (pip install; setup.py sets it): the library built for the Python module alone.
# Included from CMakeLists.txt before the library is added, with DPSOSP_SOURCES relative to the source root.

# The sources that _core does not link (the gradient checker; a link map of the module lists every other
# object of libdpsosp.a): left out. A module that starts to need one fails to import ("undefined symbol"),
# which the ctest pip_install shows. The audit stays (dpsosp.audit and dpsosp.torch.audit call it), and so do
# the file loaders: dpsosp.run(data="t.csv") reads a CSV with the CLI's loader, whose format table lists them all.
list(REMOVE_ITEM DPSOSP_SOURCES src/models/gradient_check.cpp)

# Unity batches: each group below is one translation unit, so the templates its sources share (Eigen's,
# nlohmann-json's, the standard library's) are instantiated once; most of a source's compile time is the
# front end (certify.cpp: 5.9 s at -O0, 6.7 s at -O3), so the optimization level would save little. The hot
# kernels (src/engine/, src/models/) and the noise (src/random/) are not in a group: they stay translation
# units of their own with the Release flags, compiled exactly as in any other build. The sources of a group
# share one anonymous namespace, so two that define the same helper (the algorithms' run() and audit_*(),
# kInf, fail(), team_size()) are in different groups, and a source that uses the Vec overload of all_finite
# is not grouped with one that includes data/record_format.hpp (its detail::all_finite hides it).
function(dpsosp_unity_group group)
  list(TRANSFORM ARGN PREPEND ${PROJECT_SOURCE_DIR}/)
  set_source_files_properties(${ARGN} PROPERTIES UNITY_GROUP ${group})
endfunction()
dpsosp_unity_group(data
  src/data/dataset.cpp src/data/huge_pages.cpp src/data/number_text.cpp src/data/population.cpp
  src/data/record_file.cpp src/data/record_format.cpp src/data/record_stream.cpp src/data/ring_stream.cpp
  src/data/sample_order.cpp src/data/synthetic.cpp src/report/report.cpp src/report/privacy_forms.cpp
  src/optimizers/spider_tree_adaptive.cpp)
dpsosp_unity_group(loaders
  src/data/csv.cpp src/data/file_input.cpp src/data/idx.cpp src/data/libsvm.cpp src/data/loaders.cpp)
dpsosp_unity_group(mechanisms
  src/mechanisms/banded.cpp src/mechanisms/factorization.cpp src/mechanisms/matrix_factorization.cpp
  src/mechanisms/mechanism.cpp src/mechanisms/poisson.cpp src/mechanisms/tree.cpp src/certify/certify.cpp
  src/privacy/pld_gaussian.cpp src/optimizers/spider_tree_periodic.cpp)
dpsosp_unity_group(privacy
  src/privacy/accounting.cpp src/privacy/fft.cpp src/privacy/pld.cpp src/privacy/target.cpp
  src/mechanisms/secure.cpp src/optimizers/spider_core.cpp src/optimizers/spider_gauss_fixed.cpp)
dpsosp_unity_group(options
  src/optimizers/option_table.cpp src/optimizers/params.cpp src/optimizers/registry.cpp
  src/optimizers/run_options.cpp src/optimizers/run_request.cpp src/optimizers/process_group.cpp
  src/optimizers/sgd.cpp src/privacy/pld_accountant.cpp)
dpsosp_unity_group(optimizers
  src/optimizers/clip_estimate.cpp src/optimizers/mf_params.cpp src/optimizers/minimize.cpp
  src/optimizers/minimize_streamed.cpp src/optimizers/oracles.cpp src/optimizers/scale_estimate.cpp
  src/optimizers/scaling.cpp src/optimizers/scaling_map.cpp src/optimizers/spider_mf_adaptive.cpp src/privacy/pld_pmf.cpp)
