// Internal: the format table's rows (data.hpp, FormatInfo), each defined
// beside its loader; loaders.cpp lists them.
#pragma once
#include "dpsosp/data.hpp"

namespace dpsosp {

FormatInfo csv_format_row();      // csv.cpp
FormatInfo libsvm_format_row();   // libsvm.cpp
FormatInfo idx_format_row();      // idx.cpp
FormatInfo records_format_row();  // record_file.cpp

}  // namespace dpsosp
