// `dpsosp predict`: the predictions of a released point (a run's report or a
// model file from dpsosp.save) on records, as CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "dpsosp/text.hpp"
#include "result_reader.hpp"

namespace dpsosp::cli {

void setup_predict(CLI::App& app) {
  struct Args {
    DataSource source;
    std::string point, out;
    bool no_labels = false, proba = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("predict",
                         "Predictions of a result (or model file) on records, one CSV line each: class or value, with "
                         "--proba the class probabilities");
  cmd->add_option("--point", args->point, "A result JSON of `dpsosp run` or a model file of dpsosp.save")->required();
  cmd->add_option("--data", args->source.data_path, "The records (CSV, LibSVM or IDX, as for run; - = stdin)")
      ->required();
  cmd->add_option("--format", args->source.format,
                  format_names(" | ") + " (default: what the file says it is, else its name)");
  cmd->add_option("--labels", args->source.labels_path, "IDX labels file (default: the one beside the images)");
  cmd->add_flag("--header", args->source.header, "CSV: the first line is a header (default: detected, as for run)");
  cmd->add_option("--features", args->source.features,
                  "LibSVM: the number of features D (default: the point's shape.features, else the largest index)");
  cmd->add_option("--label", args->source.label, "CSV: the label column, by header name or 0-based index (as for run)");
  cmd->add_option("--classes", args->source.classes,
                  "CSV: the class names a,b,c of the run (as for run): labels read through them, and each "
                  "prediction printed as its name");
  cmd->add_option("--categorical", args->source.categorical, "CSV: COLUMN=a|b|c, as for run (repeatable)");
  cmd->add_option("--impute", args->source.impute, "CSV: zero or COLUMN=VALUE, as for run (repeatable)");
  cmd->add_flag("--no-labels", args->no_labels,
                "The records have no label column (by default they are laid out as for run, label first, and the "
                "accuracy or mean squared error is printed on stderr)");
  cmd->add_flag("--proba", args->proba, "Classifiers: also the probability of each class");
  cmd->add_option("--out", args->out, "Write the CSV here (default: stdout)");
  args->source.app = cmd;
  cmd->callback([args, cmd] {
    if (args->point.empty()) throw Error("--point: empty file name");
    if (cmd->count("--out") > 0) check_writable(args->out);
    check_not_input(args->out, args->source.data_path, "--data");
    const PointFile point = read_point_file(args->point, "--point " + args->point);
    if (point.model.empty() || !point.shape)
      throw Error("--point " + args->point +
                  ": no \"model\" and \"shape\" (expected a result of dpsosp run or a "
                  "model file of dpsosp.save)");
    default_features_from_point(args->source, point.features);
    // Labels named by the run (its --classes a,b,c, or an estimator's classes_)
    // are read through those names, as the run read them.
    // (Names that are all numbers keep the numeric reading of the labels.)
    const auto number = [](const std::string& t) {
      double v = 0;
      return parse_strict_double(t, v) == NumberStatus::kOk;
    };
    if (!args->source.given("--classes") && !std::all_of(point.class_names.begin(), point.class_names.end(), number))
      args->source.point_class_names = point.class_names;
    // The run's table rule, for each of --label, --categorical and --impute not given here.
    args->source.point_label = point.label;
    args->source.point_categorical = point.categorical;
    args->source.point_impute = point.impute;
    args->source.point_impute_zero = point.impute_zero;
    const bool labeled = !args->no_labels && model_info(point.model).labeled;
    const Dataset raw = [&] {
      try {
        return load_data_file(args->source, labeled);
      } catch (const Error& e) {  // a table of features alone is the usual cause
        const std::string what = e.what();
        if (labeled && what.find("label") != std::string::npos)
          throw Error(what + " (records without a label column: --no-labels)");
        throw;
      }
    }();
    // A point fitted on the unit scale (scaling.hpp) predicts raw records
    // through the same map, and a regression's value in the user's units.
    const Dataset data = point.scaling ? point.scaling->apply(raw) : raw;
    const auto user = [&](double v) { return point.scaling ? point.scaling->target_to_user(v) : v; };
    const auto model = make_model(point.model, data.cols(), *point.shape);
    if (model->features() != data.cols() || model->dim() != static_cast<Index>(point.x.size()))
      throw Error("--data " + args->source.data_path + ": records of " + std::to_string(data.cols()) +
                  " features do not fit the point's " + point.model + " model (" + std::to_string(point.x.size()) +
                  " parameters)");
    const bool classifier = model->classes() > 0;
    // The labels: --classes a,b,c, else those the model file keeps (dpsosp.save of an estimator).
    std::vector<std::string> names = args->source.class_names();
    if (!args->source.given("--classes")) {
      names = point.class_names;
      if (!names.empty() && (!classifier || static_cast<Index>(names.size()) != model->classes()))
        throw Error("--point " + args->point + ": \"class_names\" holds " + std::to_string(names.size()) +
                    " labels for a " + point.model + " model of " + std::to_string(model->classes()) + " classes");
    }
    if (args->source.given("--classes") && !names.empty() &&
        (!classifier || static_cast<Index>(names.size()) != model->classes()))
      throw Error("--classes " + args->source.classes + ": " + std::to_string(names.size()) + " class names for a " +
                  point.model + " model of " + std::to_string(model->classes()) + " classes");
    if (args->proba && !classifier) throw Error("--proba: " + point.model + " is not a classifier");
    Vec predicted = predict(*model, point.x, data);
    if (!classifier)
      for (Eigen::Index i = 0; i < predicted.size(); ++i) predicted[i] = user(predicted[i]);
    RowMatrix proba;
    if (args->proba) proba = predict_proba(*model, point.x, data);
    std::string text = "prediction";
    if (args->proba)
      for (Index k = 0; k < model->classes(); ++k) text += ",p" + std::to_string(k);
    text += "\n";
    char cell[40];
    for (Index i = 0; i < data.rows(); ++i) {
      const double value = predicted[static_cast<Eigen::Index>(i)];
      std::snprintf(cell, sizeof cell, classifier ? "%.0f" : "%.17g", value);
      const bool named = !names.empty() && value >= 0 && value < static_cast<double>(names.size());
      text += named ? names[static_cast<std::size_t>(value)] : std::string(cell);
      for (Eigen::Index k = 0; k < proba.cols(); ++k) {
        std::snprintf(cell, sizeof cell, ",%.17g", proba(static_cast<Eigen::Index>(i), k));
        text += cell;
      }
      text += "\n";
    }
    write_text(args->out, text);
    if (!data.has_labels()) return;
    // The labels are the user's own data: the figure goes to the user, not into a release.
    if (classifier) {
      std::fprintf(stderr, "dpsosp: accuracy %.6f on %zu records\n", model->accuracy(point.x, data),
                   static_cast<std::size_t>(data.rows()));
    } else {
      double sum = 0;
      for (Index i = 0; i < data.rows(); ++i)
        sum += std::pow(predicted[static_cast<Eigen::Index>(i)] - raw.label(i), 2);
      std::fprintf(stderr, "dpsosp: mean squared error %.6g on %zu records\n", sum / static_cast<double>(data.rows()),
                   static_cast<std::size_t>(data.rows()));
    }
  });
}

}  // namespace dpsosp::cli
