// The --eval diagnostics of a run's x (run.cpp): the held-out records' loss
// and accuracy, and a regression's R^2 in the user's units.
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli.hpp"

namespace dpsosp::cli {

nlohmann::json eval_diagnostics(const Model& model, const Vec& x, const Dataset& eval, const Vec& user_y,
                                const Scaling* target, std::string& figure) {
  IndexList all(eval.rows());
  for (Index i = 0; i < eval.rows(); ++i) all[i] = i;
  const double loss = model.mean_loss(x, eval, all), accuracy = model.accuracy(x, eval);
  nlohmann::json j = {{"n", eval.rows()}, {"loss", number(loss)}, {"accuracy", number(accuracy)}};
  double r2 = std::numeric_limits<double>::quiet_NaN();
  if (model_info(model.name()).regression && user_y.size() == eval.rows() &&
      eval.rows() > 1) {  // R^2 in the user's units
    const Vec predicted = predict(model, x, eval);
    double mean = 0, res = 0, tot = 0;
    const auto user = [&](double v) { return target != nullptr ? target->target_to_user(v) : v; };
    const auto y = [&](Index i) { return user_y[i]; };
    for (Index i = 0; i < eval.rows(); ++i) mean += y(i) / static_cast<double>(eval.rows());
    for (Index i = 0; i < eval.rows(); ++i) {
      res += std::pow(user(predicted[i]) - y(i), 2);
      tot += std::pow(y(i) - mean, 2);
    }
    if (tot > 0) r2 = 1 - res / tot;
    j["r2"] = number(r2);
  }
  char text[96];
  if (model.classes() > 0)
    std::snprintf(text, sizeof text, "--eval accuracy %.4f", accuracy);
  else if (!std::isnan(r2))
    std::snprintf(text, sizeof text, "--eval R^2 %.4f", r2);
  else
    std::snprintf(text, sizeof text, "--eval loss %.4g", loss);
  figure = text;
  return j;
}

}  // namespace dpsosp::cli
