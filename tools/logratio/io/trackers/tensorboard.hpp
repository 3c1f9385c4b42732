#pragma once
// TensorBoard event files (events.out.tfevents.*) and logdirs -> history_set.
//
// Format, as written by tensorflow/tensorboard @70b76c92 and read here:
//  - TFRecord framing (tensorboard/summary/writer/record_writer.py): per
//    record uint64 LE length, uint32 masked CRC-32C of those 8 bytes, the
//    data, uint32 masked CRC-32C of the data. Both CRCs are verified; a
//    corrupt or truncated record is a format_error naming file and byte.
//  - Each record is an Event (tensorboard/compat/proto/event.proto):
//    wall_time = 1 (double), step = 2 (int64), summary = 5. Summary
//    (summary.proto): value = 1 (repeated Value); Value: tag = 1,
//    simple_value = 2 (float), image = 4, histo = 5, audio = 6, tensor = 8,
//    metadata = 9 -> SummaryMetadata.plugin_data = 1 -> plugin_name = 1.
//    TensorProto (tensor.proto): dtype = 1 (DT_FLOAT 1, DT_DOUBLE 2),
//    tensor_shape = 2 (TensorShapeProto dim = 2 -> size = 1), tensor_content
//    = 4 (raw little-endian), float_val = 5, double_val = 6 (packed or not).
//  - Scalars: simple_value (torch.utils.tensorboard SummaryWriter.add_scalar,
//    pytorch/pytorch torch/utils/tensorboard/summary.py scalar(new_style=False))
//    and one-element float/double tensors whose tag's plugin is "scalars" or
//    unset (summary.py scalar(new_style=True): float_val or double_val;
//    tf.summary.scalar: tensor_content). As in TensorBoard, a tag's plugin is
//    the one named by the first value of the tag that carries metadata.
//    Images, audio, histograms, text and other tensors are skipped, with a note.
//  - Attributes: a value whose plugin is "hparams" holds HParamsPluginData
//    (tensorboard/plugins/hparams/plugin_data.proto @70b76c92:
//    session_start_info = 3 -> SessionStartInfo hparams = 1, a map of
//    google.protobuf.Value: number 2, string 3, bool 4); its hparams are the
//    run's attributes (numbers as attributes.hpp writes them), not a tag.
//    torch's add_hparams (transformers' TensorBoardCallback) writes them into
//    a directory of their own below the run's (<run>/<time>/): they become
//    the attributes of the run above, and a directory of hparams only is no
//    run of its own (with a note).
//  - Runs (TensorBoard's logdir convention): every directory holding files
//    whose name contains "tfevents" is a run, named by its path relative to
//    the logdir ("." for the logdir itself). A run's event files are read in
//    name order (the name starts with the creation time); a step logged twice
//    for a tag keeps the value with the later wall time (later in file order
//    on a tie), every such step is counted in a note. This is the rule
//    (#16). TensorBoard's data server goes one further
//    (tensorboard/data/server/reservoir.rs, "preemption"): a record at step s
//    also drops the tag's records at steps after s read before it, so steps a
//    crashed job logged past its last checkpoint vanish when the restarted job
//    logs again; here they stay until the restart logs them again.
#include <cstddef>
#include <string>

#include <logratio/core/error.hpp>

#include "../mapped_file.hpp"
#include "crc32c.hpp"
#include "history.hpp"
#include "protobuf_wire.hpp"

namespace logratio_cli::trackers {

/// The scalars of one event file held in memory (one run named `name`); the
/// entry point of fuzz/fuzz_tfrecord.cpp.
history_set read_tensorboard_bytes(const unsigned char* data, std::size_t size, const std::string& name);

/// The scalars of a TensorBoard logdir (every directory holding event files
/// is a run, named by its path under the logdir; in a <group>/<run> layout,
/// e.g. tb/sync/run1, the first directory is the run's group, as for TRL
/// output directories) or of one event file (one run, named by its directory).
history_set read_tensorboard(const std::string& path);

/// True if the file starts with a TFRecord frame: at least 12 bytes and a
/// valid masked CRC-32C of the first 8 (the length). A content sniff; a
/// chance match is 1 in 2^32.
bool looks_like_tfrecord(const std::string& file);

}  // namespace logratio_cli::trackers
