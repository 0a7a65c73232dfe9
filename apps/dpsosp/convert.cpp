// `dpsosp convert`: records from CSV, LibSVM, IDX (or a synthetic spec) into a
// record file (docs/data-formats.md, "Record files"), which `dpsosp run` can
// load or stream (--stream).
#include <sys/stat.h>

#include <chrono>
#include <iostream>
#include <limits>
#include <vector>

#include "cli.hpp"

namespace dpsosp::cli {

void setup_convert(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string in, out, format, labels, synthetic, shuffle_seed, values = "float64", features;
    bool header = false, no_labels = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "convert", "Write records (CSV, LibSVM, IDX or --synthetic) to a record file that run can stream (--stream)");
  // IN OUT, or OUT alone with --synthetic.
  cmd->add_option("files", args->files,
                  "IN OUT: the input file (CSV, LibSVM or IDX, any of them gzip-compressed) and the record file to "
                  "write (.dpsr); OUT alone with --synthetic")
      ->required();
  cmd->add_option("--synthetic", args->synthetic, "Instead of IN: NAME:key=value,... (as for run)");
  cmd->add_option("--format", args->format, format_names(" | ") + " (default: what IN says it is, else its name)");
  cmd->add_option("--labels", args->labels, "IDX labels file (default: the labels-idx1 file beside the images)");
  cmd->add_flag("--header", args->header, "CSV: skip one header line");
  cmd->add_flag("--no-labels", args->no_labels,
                "CSV: every column is a feature; IDX: no labels file (unsupervised data)");
  cmd->add_option("--shuffle-seed", args->shuffle_seed,
                  "Write the records in the sample order of this public seed: streamed front to back they are used "
                  "as a loaded run with --seed SEED uses them (default: the input's order)");
  cmd->add_option("--features", args->features,
                  "LibSVM: the number of features D (public), written to the header so that a private run can use "
                  "the file; an index above D is refused (default: the largest index, which a private run refuses); "
                  "CSV, IDX: checked against their width");
  cmd->add_option("--values", args->values, "float64 (default) or float32 (half the bytes; values rounded to float32)")
      ->capture_default_str();
  cmd->callback([args, cmd] {
    const auto given = [&](const char* option) { return cmd->count(option) > 0; };
    RecordWriteOptions w;
    if (args->values != "float64" && args->values != "float32")
      throw Error("--values: expected float64 or float32, got " + quote_token(args->values));
    w.values = parse_record_value_type(args->values);
    if (given("--shuffle-seed"))
      w.shuffle_seed = parse_count(args->shuffle_seed, "--shuffle-seed", 0, std::numeric_limits<std::uint64_t>::max());
    const std::size_t want = args->synthetic.empty() ? 2 : 1;
    if (args->files.size() != want)
      throw Error(args->synthetic.empty()
                      ? "expected IN OUT (or --synthetic SPEC OUT), got " + std::to_string(args->files.size()) +
                            " file names"
                      : "--synthetic: expected OUT alone, got " + std::to_string(args->files.size()) + " file names");
    args->out = args->files.back();
    if (want == 2) args->in = args->files.front();
    if (want == 2 && args->in.empty()) throw Error("IN: empty file name");
    if (!args->synthetic.empty() &&
        (given("--format") || given("--labels") || given("--header") || given("--no-labels") || given("--features")))
      throw Error(
          "--format, --labels, --header, --no-labels and --features apply to an input file, not to "
          "--synthetic");
    const Index features =
        given("--features") ? static_cast<Index>(parse_count(args->features, "--features", 1, 2147483647)) : 0;
    if (args->out.empty()) throw Error("OUT: empty file name");
    check_writable(args->out, "OUT");
    check_not_input(args->out, args->in, "IN");
    const auto start = std::chrono::steady_clock::now();
    Dataset data;
    if (!args->synthetic.empty()) {
      data = std::move(make_synthetic(args->synthetic).data);
    } else {
      const FileFormat format = args->format.empty() ? guess_file_format(args->in) : parse_file_format(args->format);
      if (format == FileFormat::kRecords) throw Error("IN " + args->in + ": is a record file already");
      if (args->header && !format_info(format).csv_options)
        throw Error("--header: applies to CSV files, not " + args->in);
      if (!args->labels.empty() && !format_info(format).labels_file)
        throw Error("--labels: applies to IDX images, not " + args->in);
      if (format_info(format).labels_file && !args->labels.empty()) {
        data = load_idx(args->in, args->no_labels ? "" : args->labels);
      } else {
        LoadOptions lo;
        lo.header = args->header;
        lo.labeled = !args->no_labels;
        lo.libsvm_features = features;
        data = load_dataset(args->in, format, lo);
      }
      if (features != 0 && data.cols() != features)  // a dense format's width, the same for every record
        throw Error("--features " + std::to_string(features) + ": the records of " + args->in + " have " +
                    std::to_string(data.cols()) + " features");
      w.features_declared = features != 0;
    }
    write_record_file(data, args->out, w);
    const RecordFileInfo info = read_record_file_info(args->out);
    nlohmann::json j;
    j["out"] = args->out;
    j["records"] = info.rows;
    j["features"] = info.cols;
    j["storage"] = info.sparse ? "csr" : "dense";
    // Whether a private run may use the file: a dense width, or a declared count (--features).
    j["features_declared"] = info.features_declared;
    j["labeled"] = info.labeled;
    j["values"] = record_value_type_name(info.values);
    j["shuffle_seed"] = info.shuffle_seed ? nlohmann::json(*info.shuffle_seed) : nlohmann::json(nullptr);
    j["block_records"] = info.block_records;
    j["bytes"] = info.payload_bytes + 128;
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << j.dump(2) << "\n";
  });
}

}  // namespace dpsosp::cli
