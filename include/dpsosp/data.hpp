// dpsosp: datasets (dense or sparse features plus an optional label column),
// file loaders and the single-pass sample pool. Where records sit in memory
// (huge pages, records copied into a sample order) is data_layout.hpp's.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/types.hpp"

namespace dpsosp {

namespace detail {
struct DatasetLayout;  // src/data/dataset_layout.hpp: where records are stored, for the library
struct BatchPlan;      // src/data/dataset_layout.hpp: how a run's batches come (order, stream, processes)
}  // namespace detail

/// n records with p features each, and an optional label/target per record.
/// Features are stored dense (row-major) or sparse (CSR); every model reads
/// them through row_dot / row_axpy / row_dense so it works with both.
class Dataset {
 public:
  Dataset();
  /// Dense features; labels may be empty (unsupervised, e.g. PCA).
  Dataset(RowMatrix features, Vec labels);
  /// Sparse features (CSR).
  Dataset(SparseRowMatrix features, Vec labels);

  Index rows() const;
  Index cols() const;
  /// Copies share the records' memory until one of them moves its records
  /// (store_in_sample_order), which then takes a copy of its own first.
  Dataset(const Dataset&) = default;
  Dataset& operator=(const Dataset&) = default;
  Dataset(Dataset&& other) noexcept;
  Dataset& operator=(Dataset&& other) noexcept;

  bool is_sparse() const { return records_->is_sparse; }
  bool has_labels() const { return records_->labels.size() > 0; }
  /// Record i's label (no range check).
  double label(Index i) const { return records_->labels[static_cast<Eigen::Index>(slot(i))]; }
  /// The stored arrays. Row k of dense() / sparse() and entry k of labels()
  /// hold record k, unless store_in_sample_order moved the records: then they
  /// hold the records in that sample order.
  const Vec& labels() const { return records_->labels; }

  /// Per-record weights in [0, 1] (sample_weight, docs/privacy.md "Sample
  /// weights"): record i adds weight(i) times its clipped per-example vector
  /// to every clipped sum, so its contribution's norm stays at most the clip
  /// bound and the sensitivity is unchanged (the weight is part of the
  /// record); weight 0 adds nothing. Without weights every record weighs 1.
  bool has_weights() const { return records_->weights.size() > 0; }
  /// Record i's weight (1 without weights; no range check).
  double weight(Index i) const { return has_weights() ? records_->weights[static_cast<Eigen::Index>(slot(i))] : 1.0; }
  /// Sets record i's weight to w[i] (one per record, each in [0, 1]); throws
  /// Error "sample_weight: ..." naming the first bad index, or the count.
  /// Empty w, or all ones, stores none: the unweighted path, the same bits.
  void set_weights(const Vec& w);
  /// The weights in record order (entry i: record i's); empty without weights.
  Vec record_weights() const;
  const RowMatrix& dense() const { return records_->dense; }
  const SparseRowMatrix& sparse() const { return records_->sparse; }
  /// Record i's features in dense storage: cols() doubles (no range check).
  const double* dense_row(Index i) const {
    return records_->dense.data() + slot(i) * static_cast<Index>(records_->dense.cols());
  }

  /// Stores the records in the order in which SamplePool(rows(), seed) hands
  /// them out, so that a single-pass optimizer run with this seed reads them
  /// front to back instead of in a random order (several times as fast on
  /// large data; docs/performance.md). Only where each record sits in memory
  /// changes: record i is still record i for row_dot, label, subset, every
  /// model and every optimizer, and every result is the same, bit for bit.
  /// Takes one pass over the records in a random order, in place (dense: one
  /// record of scratch; sparse: a second copy of the CSR arrays while it
  /// runs), plus 8 bytes a record for the order and its inverse. Calling it
  /// again with another seed moves the records to that seed's order. Throws
  /// Error for more than 2^32 - 1 records.
  void store_in_sample_order(std::uint64_t seed);

  /// <z_i, w> for feature row i (w has cols() entries).
  double row_dot(Index i, const Eigen::Ref<const Vec>& w) const;
  /// out += scale * z_i.
  void row_axpy(Index i, double scale, Eigen::Ref<Vec> out) const;
  /// out = z_i as a dense vector (out must have cols() entries).
  void row_dense(Index i, Eigen::Ref<Vec> out) const;
  /// ||z_i||^2.
  double row_squared_norm(Index i) const;
  /// The records listed (in that order) as a new dataset of the same storage kind.
  Dataset subset(const IndexList& idx) const;

 private:
  // Where the records are stored: the library reads these through
  // detail::DatasetLayout (src/data/dataset_layout.hpp), which says what they are.
  std::optional<std::uint64_t> sample_order_seed() const { return order_seed_; }
  Index slot(Index i) const { return slot_.empty() ? i : slot_[static_cast<std::size_t>(i)]; }
  Index record_at(Index k) const { return order_.empty() ? k : order_[static_cast<std::size_t>(k)]; }
  Dataset stored_rows() const;
  Vec weights_of(const IndexList& idx) const;  // the weights of the records idx (empty without weights)

  struct Records {
    RowMatrix dense;
    SparseRowMatrix sparse;
    Vec labels;
    Vec weights;  // empty, or one per stored row (like labels)
    bool is_sparse = false;
  };
  // Never null (an empty dataset shares one empty Records); shared by copies.
  std::shared_ptr<Records> records_;
  static const std::shared_ptr<Records>& empty_records();
  // Set by store_in_sample_order: slot_[i] is record i's stored row, order_[k]
  // the record in stored row k (the sample order of order_seed_). Empty: row i
  // holds record i.
  std::vector<std::uint32_t> slot_;
  std::vector<std::uint32_t> order_;
  std::optional<std::uint64_t> order_seed_;
  // Set only on the view of the records that minimize hands an algorithm:
  // the order, where the records come from, the processes (BatchPlan).
  std::shared_ptr<const detail::BatchPlan> plan_;

  friend struct detail::DatasetLayout;
  friend class SamplePool;
};

/// Throws Error "WHO: record I (0-based), feature J is nan; ..." (or "label of
/// record I") at the first entry that is NaN or infinite: such records are
/// refused before a run draws any noise (SPEC section 8). Finite values,
/// however large, pass: clipping bounds what any record can do.
void check_finite(const Dataset& data, const std::string& who);

/// How a file's records are laid out. kRecords: a dpsosp record file
/// (record_file.hpp), written by `dpsosp convert`.
enum class FileFormat { kCsv, kLibsvm, kIdx, kRecords };

/// A CSV column named by its header name, or by its 0-based index (a string
/// of digits).
using CsvColumn = std::string;

/// A categorical CSV column and its public categories: one-hot encoded into
/// one feature per category, in this order (docs/data-formats.md).
struct CsvCategorical {
  CsvColumn column;
  std::vector<std::string> categories;
};

/// One CSV column's rule for its missing values (an empty field, NA, N/A or
/// NaN, any case): a number, or for a categorical column one of its
/// categories. Labels are never imputed.
struct CsvImpute {
  CsvColumn column;
  std::string value;
};

struct LoadOptions {
  /// CSV: the first line is a header. When false, a header is still taken
  /// when the first line has a field in a numeric column that is not a number
  /// (nor a missing value), or when a column is named by its header name.
  bool header = false;
  /// The label column is the label / target. False for unsupervised data (PCA).
  bool labeled = true;
  /// CSV: the label column (default: the first, index 0).
  CsvColumn label_column;
  /// CSV: the column of the records' weights, each in [0, 1] (Dataset::
  /// set_weights); not a feature. Empty: no weights.
  CsvColumn weights_column;
  /// CSV: the public class names; each label is one of them (compared as
  /// text) and becomes its index. Empty: numeric labels. A label that is not
  /// one of them is refused in words that do not depend on the record.
  std::vector<std::string> class_names;
  /// CSV: the categorical columns (refused like labels: a value not among the
  /// categories is refused in words that do not depend on the record).
  std::vector<CsvCategorical> categorical;
  /// CSV: how missing values are filled. Neither rule: a missing value is
  /// refused, naming its line and column. impute_zero: a numeric feature 0, a
  /// categorical one no category (all its one-hot features 0); a column's own
  /// rule in `impute` comes first.
  bool impute_zero = false;
  std::vector<CsvImpute> impute;
  /// CSV: refusals name Python's keywords (label=, impute='zero', ...), not
  /// the CLI's options (--label, --impute zero, ...): dpsosp.run(data=...).
  bool keyword_words = false;
  /// LibSVM: the declared number of features (public: a private run needs
  /// it); a record with a larger index is refused in words that name no
  /// record. 0 = the largest index seen, read from the records.
  Index libsvm_features = 0;
};

/// A data format's row in the format table: its names, how a file says it is
/// one, and its loader. Each loader's file defines its row (csv.cpp,
/// libsvm.cpp, idx.cpp, record_file.cpp); loaders.cpp lists them.
struct FormatInfo {
  FileFormat id = FileFormat::kCsv;
  std::string name;                     ///< as --format takes it
  std::vector<std::string> aliases;     ///< other names --format takes
  std::vector<std::string> extensions;  ///< of the file's name (after a .gz), lower case: ".csv", "-ubyte"
  /// Whether the first bytes (through gzip) say the file is one; null where the format has no mark.
  bool (*says)(const unsigned char* head, std::size_t count) = nullptr;
  Dataset (*load)(const std::string& path, const LoadOptions& options) = nullptr;
  bool table = false;        ///< a user's table (CSV, LibSVM): the private scale applies by default
  bool csv_options = false;  ///< reads --header, --label, --classes a,b,c, --categorical, --impute
  bool sparse = false;       ///< its width comes from its largest index unless declared (--features)
  bool labels_file = false;  ///< its labels may come from a second file (IDX: --labels, or the images' sibling)
};
/// Every format, in the order help texts list them.
const std::vector<FormatInfo>& format_table();
const FormatInfo& format_info(FileFormat id);
/// The formats' names joined by separator ("csv | libsvm | idx | records").
std::string format_names(const std::string& separator);

/// A format by one of its names (any case); throws Error naming the choices.
FileFormat parse_file_format(const std::string& name);
/// The format a file says it is (its first bytes), else its name's extension
/// (.gz stripped); throws Error when neither tells.
FileFormat guess_file_format(const std::string& path);

/// What load_csv says of a table beyond its records, from its header line and
/// the options alone (public: no record is read for it).
struct CsvNotes {
  /// What a user may not mean, for the run's warnings: a feature column with
  /// no name (pandas' to_csv writes its index so); a column named like a label
  /// (target, label, class, y, outcome; any case) while the labels are read
  /// from the default first column.
  std::vector<std::string> warnings;
  /// Where the label column was not chosen (LoadOptions::label_column empty):
  /// which column the labels were read from and how another is picked, in the
  /// options' words, for a front end to add to a refusal of its labels
  /// (LabelError). Empty where the label column was chosen or there is none.
  std::string label_origin;
};

/// The loaders read the path "-" as the standard input (once; gzip or plain).
/// CSV, one record per line (docs/data-formats.md): numbers, class names,
/// categories, "quoted" fields. Errors name the file, line and reason. With
/// header = true the first line must not be all numbers (it would be a record
/// dropped as a header).
Dataset load_csv(const std::string& path, const LoadOptions& options = {});
/// load_csv, and *one_hot_features = per feature of its records, whether it is
/// a one-hot feature of a declared categorical column (public: the declared
/// categories and the header line say so; RunRequest::scaling reads them).
/// With notes, what the table's layout says (CsvNotes).
Dataset load_csv(const std::string& path, const LoadOptions& options, std::vector<bool>* one_hot_features,
                 CsvNotes* notes = nullptr);
/// LibSVM / SVMlight: "label idx:val idx:val ..." with 1-based increasing indices.
Dataset load_libsvm(const std::string& path, const LoadOptions& options = {});
/// IDX (optionally gzip-compressed) images; pixels of unsigned-byte files are
/// scaled to [0,1]. When labels_path is non-empty, the labels come from that IDX1 file.
Dataset load_idx(const std::string& images_path, const std::string& labels_path = "");
/// Dispatches on the format.
Dataset load_dataset(const std::string& path, FileFormat format, const LoadOptions& options = {});

/// Hands out record indices without replacement in a random order fixed by the
/// seed: the single-pass budget of the private algorithms.
class SamplePool {
 public:
  SamplePool(Index n, std::uint64_t seed);
  /// The same order as SamplePool(data.rows(), seed). When the records are
  /// stored in that order (Dataset::store_in_sample_order(seed)) the pool
  /// reads it from the dataset instead of shuffling, and must not outlive it.
  /// On the records of a run planned in the file's order (RunOptions::
  /// sample_order, which minimize hands the algorithm) it is 0, 1, 2, ....
  SamplePool(const Dataset& data, std::uint64_t seed);
  /// The next k unused records; throws Error when fewer than k remain.
  IndexList draw(Index k);
  Index remaining() const { return size_ - next_; }
  Index used() const { return next_; }
  Index size() const { return size_; }

 private:
  // Read through detail::DatasetLayout (src/data/dataset_layout.hpp).
  Index advance(Index k);
  bool reads_order_of(const Dataset& data) const {
    return (shared_ != nullptr && shared_ == data.order_.data()) || (identity_ && data.order_.empty());
  }

  Index size_ = 0;
  // The records' own order 0, 1, 2, ... (a run planned in SampleOrder::kFile):
  // no order array at all.
  bool identity_ = false;
  // The order, in 32-bit entries when n fits (the usual case), else 64-bit.
  std::vector<std::uint32_t> order32_;
  std::vector<std::uint64_t> order64_;
  const std::uint32_t* shared_ = nullptr;  // the dataset's order, when it is stored in it
  Index next_ = 0;
  void shuffle(std::uint64_t seed);  // draws the order into order32_ / order64_

  friend struct detail::DatasetLayout;
};

}  // namespace dpsosp
