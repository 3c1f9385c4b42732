#pragma once
// The doctor's diagnosis of one dump and the dump's identity
// (commands/doctor_scan.hpp makes it; the reports show it).
#include <string>

#include <logratio/doctor/diagnose.hpp>

namespace logratio_cli {

struct dump_diagnosis {
    std::string path, label, run;  ///< label: "run@update", or the relative path
    double update = 0;
    logratio::doctor::diagnosis d;
};

}  // namespace logratio_cli
