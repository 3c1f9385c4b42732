# logratio correct / panel with the slime and TRL flavours (included from
# CMakeLists.txt): every configuration of the small fixture and of heavy_x20
# against the framework's own outputs (README's table of modes), the
# frameworks' tensor names, and the errors. ARGS is a |-separated list (a ';'
# would split the ctest command).
set(data ${LOGRATIO_TEST_DATA})
function(cli_flavour name)
  add_test(NAME cli_${name}
           COMMAND ${CMAKE_COMMAND} -DTOOL=${tool} -DCLOSE=$<TARGET_FILE:close> ${ARGN}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/correct_flavour.cmake)
  set_tests_properties(cli_${name} PROPERTIES FIXTURES_REQUIRED cli_inputs)  # ${dir} for --out
endfunction()
# Every mode also writes --out, checked against the framework's weights and
# mask (the rejection case: every mode with a rejection, gen_framework_reference.py).
foreach(case small heavy_x20 rejection)
  foreach(fw slime trl)
    file(GLOB configs LIST_DIRECTORIES true ${data}/${case}/${fw}/*)
    foreach(config IN LISTS configs)
      get_filename_component(cname ${config} NAME)
      cli_flavour(correct_${fw}_${case}_${cname} -DCONFIG=${config}
                  -DOUT=${dir}/flavour_${case}_${fw}_${cname}.safetensors -DVERIFY=$<TARGET_FILE:verify_correct_out>
                  -DINPUT=${data}/${case}/padded.safetensors
                  "-DARGS=correct|${data}/${case}/padded.safetensors|--json")
    endforeach()
  endforeach()
endforeach()
# The frameworks' tensor names, read as they are (detected, or by --flavour), said on stderr.
cli_flavour(names_trl_mode -DCONFIG=${data}/small/trl/sequence_mask
            "-DSTDERR_REGEX=trl's tensor names \\(flavour trl\\): old_per_token_logps, sampling_per_token_logps, completion_mask"
            "-DARGS=correct|${data}/names/trl.safetensors|--json")
cli_flavour(names_slime_flavour -DCONFIG=${data}/small/slime/mis_clip_token
            "-DSTDERR_REGEX=slime's tensor names \\(flavour slime\\): log_probs, rollout_log_probs, loss_mask"
            "-DARGS=correct|${data}/names/slime.safetensors|--json")
cli_flavour(names_verl_panel "-DSTDERR_REGEX=verl's tensor names \\(flavour verl\\)"
            "-DARGS=panel|${data}/names/verl.safetensors|--flavour|verl|--json")
cli_flavour(names_verl_correct "-DSTDERR_REGEX=verl's tensor names \\(detected\\)"
            "-DARGS=correct|${data}/names/verl.safetensors|--is|token|--is-threshold|2")
cli_flavour(panel_slime "-DSTDERR_REGEX=slime's tensor names \\(detected\\)"
            "-DARGS=panel|${data}/names/slime.safetensors|--json")
cli_flavour(panel_trl "-DSTDERR_REGEX=trl's tensor names \\(detected\\)"
            "-DARGS=panel|${data}/names/trl.safetensors|--no-quantiles")
cli_flavour(panel_slime_metrics "-DSTDOUT_REGEX=\"slime\": {[^\"]*\"train_rollout_logprob_abs_diff\": 0.04432316"
            "-DARGS=panel|${data}/small/padded.safetensors|--flavour|slime|--json")
cli_flavour(panel_trl_metrics "-DSTDOUT_REGEX=sampling/sampling_logp_difference/max +0.2636353"
            "-DARGS=panel|${data}/small/padded.safetensors|--flavour|trl|--no-quantiles")
cli_fails(names_missing "missing tensor 'log_probs' \\(tensors present: completion_mask, old_per_token_logps, sampling_per_token_logps; choose with --train-key, --rollout-key, --mask-key\\)"
          panel ${data}/names/trl.safetensors --flavour slime)
cli_fails(names_missing_default "missing tensor 'rollout_logprobs' \\(tensors present: "
          panel ${dir}/missing_rollout.safetensors)
cli_fails(mode_unknown "unknown mode 'slime:mis-truncate'" correct ${data}/small/padded.safetensors --mode slime:mis-truncate)
cli_fails(mode_wrong_setting "--clip-min / --clip-max does not apply to --mode slime:tis"
          correct ${data}/small/padded.safetensors --mode slime:tis --clip-max 2)
cli_fails(mode_with_verl_options "leave is, rejection and veto empty"
          correct ${data}/small/padded.safetensors --mode trl:token_mask --is token)
cli_fails(mode_veto_needs_rs "--rs-level / --rs-lower-bound / --rs-upper-bound / --rs-veto-threshold \\(they need --use-rs\\)"
          correct ${data}/small/padded.safetensors --mode slime:mis-mask-token --rs-veto-threshold 1e-4)
cli_fails(mode_geometric_bn "tis_batch_normalize at geometric level"
          correct ${data}/small/padded.safetensors --mode slime:mis-clip-geometric --tis-batch-normalize)
cli_fails(mode_flavour_mismatch "--flavour verl does not match --mode trl:token_mask"
          correct ${data}/small/padded.safetensors --flavour verl --mode trl:token_mask)
cli_fails(trl_needs_mode "flavour trl needs a mode" correct ${data}/small/padded.safetensors --flavour trl)
# A mask value other than 0 or 1 is an error naming the tensor, row and column
# (validated at view construction: panel, correct and doctor alike).
foreach(cmd panel correct doctor)
  cli_fails(mask_half_${cmd} "mask: value 0.5 at row 1, column 2 .flat index 63. is not 0 or 1"
            ${cmd} ${data}/rejection/mask_half.safetensors)
endforeach()
