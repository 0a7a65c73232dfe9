// dpsosp: differentially private second-order stationary points.
#include <iostream>

#include "cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dpsosp: differentially private non-convex optimization that finds second-order stationary points"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dpsosp 0.1.0");
  dpsosp::cli::setup_run(app);
  dpsosp::cli::setup_certify(app);
  dpsosp::cli::setup_privacy(app);
  dpsosp::cli::setup_demo(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dpsosp: error: " << e.what() << " (see dpsosp --help)\n";
    return 2;
  } catch (const dpsosp::Error& e) {
    std::cerr << "dpsosp: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "dpsosp: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "dpsosp: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
