// Tests of the CSV loader's tables (docs/data-formats.md): the label column by
// name or index, class names, categorical columns one-hot, missing values
// refused (naming line and column) or imputed, quoted fields; refusals of
// undeclared labels and categories name no record.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "test_errors.hpp"
#include "test_fixtures.hpp"

namespace dpsosp {
namespace {

template <class F>
std::string error_of(F&& f) {
  const std::string msg = testing::error_of(std::forward<F>(f));
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
  return msg;
}

class CsvTableTest : public testing::ScratchDirTest {
 protected:
  CsvTableTest() : ScratchDirTest("dpsosp_csv_table_") {}
};

TEST_F(CsvTableTest, LabelColumnByNameOrIndex) {
  const std::string path = write("t.csv", "x1,y,x2\n0.5,1,2\n-1,0,3\n");
  LoadOptions by_name;
  by_name.label_column = "y";
  const Dataset a = load_csv(path, by_name);
  ASSERT_EQ(a.rows(), 2u);
  ASSERT_EQ(a.cols(), 2u);
  EXPECT_EQ(a.labels(), Vec((Vec(2) << 1, 0).finished()));
  EXPECT_EQ(a.dense(), RowMatrix((RowMatrix(2, 2) << 0.5, 2, -1, 3).finished()));
  LoadOptions by_index;
  by_index.label_column = "1";
  const Dataset b = load_csv(path, by_index);
  EXPECT_EQ(b.dense(), a.dense());
  EXPECT_EQ(b.labels(), a.labels());
  // A headerless file by index: the last column.
  LoadOptions last;
  last.label_column = "2";
  const Dataset c = load_csv(write("n.csv", "1,2,0\n3,4,1\n"), last);
  EXPECT_EQ(c.labels(), Vec((Vec(2) << 0, 1).finished()));
  EXPECT_EQ(c.dense(), RowMatrix((RowMatrix(2, 2) << 1, 2, 3, 4).finished()));
  LoadOptions missing;
  missing.label_column = "income";
  EXPECT_CONTAINS(error_of([&] { load_csv(path, missing); }),
                  "the label column (--label): the header line has no column 'income' (its columns: x1, y, x2)");
  LoadOptions beyond;
  beyond.label_column = "3";
  EXPECT_CONTAINS(error_of([&] { load_csv(path, beyond); }),
                  "column 3 (0-based) does not exist: the file has 3 columns");
  // A name needs a header line.
  EXPECT_CONTAINS(error_of([&] { load_csv(write("h.csv", "1,2,0\n"), missing); }),
                  "a column is named by its header name, but the first line is all numbers");
}

TEST_F(CsvTableTest, ClassNamesMapLabelsToIndices) {
  const std::string path = write("iris.csv", "species,len\nsetosa,1.5\n\"virginica\",2\nversicolor,3\n");
  LoadOptions o;
  o.label_column = "species";
  o.class_names = {"setosa", "versicolor", "virginica"};
  const Dataset d = load_csv(path, o);
  EXPECT_EQ(d.labels(), Vec((Vec(3) << 0, 2, 1).finished()));
  EXPECT_EQ(d.dense().col(0), Vec((Vec(3) << 1.5, 2, 3).finished()));
  // A label not declared: refused in words that name no record (the same for any such file).
  const std::string a = error_of([&] { load_csv(write("a.csv", "species,len\nsetosa,1\nrose,2\n"), o); });
  const std::string b = error_of([&] { load_csv(write("a.csv", "species,len\ntulip,1\nsetosa,2\n"), o); });
  EXPECT_EQ(a, b);
  EXPECT_CONTAINS(a,
                  "a label in column 'species' is not one of the 3 declared classes (--classes "
                  "setosa,versicolor,virginica)");
  EXPECT_EQ(a.find("line"), std::string::npos);
  // The label column is never imputed.
  o.impute_zero = true;
  EXPECT_CONTAINS(error_of([&] { load_csv(write("m.csv", "species,len\n,1\n"), o); }),
                  "line 2: missing label (an empty field) in column 'species': labels are never imputed");
}

TEST_F(CsvTableTest, CategoricalColumnsOneHot) {
  const std::string path = write("c.csv", "y,color,size\n1,red,2\n0,blue,3\n1,green,4\n");
  LoadOptions o;
  o.categorical = {{"color", {"red", "green", "blue"}}};
  const Dataset d = load_csv(path, o);
  ASSERT_EQ(d.cols(), 4u);  // red, green, blue, size
  RowMatrix expected(3, 4);
  expected << 1, 0, 0, 2, 0, 0, 1, 3, 0, 1, 0, 4;
  EXPECT_EQ(d.dense(), expected);
  LoadOptions by_index;
  by_index.categorical = {{"1", {"red", "green", "blue"}}};
  EXPECT_EQ(load_csv(path, by_index).dense(), expected);
  // A value not declared: refused in words that name no record.
  o.categorical = {{"color", {"red", "green"}}};
  const std::string msg = error_of([&] { load_csv(path, o); });
  EXPECT_CONTAINS(msg, "a value in the categorical column 'color' is not one of its 2 declared categories (red|green)");
  EXPECT_EQ(msg.find("line"), std::string::npos);
  LoadOptions twice;
  twice.categorical = {{"color", {"red", "red"}}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, twice); }), "category 'red' is declared twice");
  LoadOptions label;
  label.categorical = {{"y", {"0", "1"}}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, label); }), "is the label column");
}

TEST_F(CsvTableTest, MissingValuesRefusedOrImputed) {
  const std::string path = write("m.csv", "y,age,color\n1,30,red\n0,NA,blue\n1,40,\n");
  LoadOptions o;
  o.categorical = {{"color", {"red", "blue"}}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, o); }),
                  "m.csv line 3: missing value ('NA') in column 'age': fill it in, or declare a rule: --impute zero "
                  "or --impute age=VALUE");
  o.impute = {{"age", "35"}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, o); }), "line 4: missing value (an empty field) in column 'color'");
  o.impute.push_back({"color", "blue"});
  const Dataset d = load_csv(path, o);
  RowMatrix expected(3, 3);
  expected << 30, 1, 0, 35, 0, 1, 40, 0, 1;
  EXPECT_EQ(d.dense(), expected);
  LoadOptions zero;
  zero.categorical = o.categorical;
  zero.impute_zero = true;
  expected << 30, 1, 0, 0, 0, 1, 40, 0, 0;
  EXPECT_EQ(load_csv(path, zero).dense(), expected);
  // NaN and N/A are missing too; a rule's value must fit its column.
  EXPECT_CONTAINS(error_of([this] { load_csv(write("n.csv", "1,2\n0,NaN\n")); }),
                  "missing value ('NaN') in column 1 (0-based)");
  EXPECT_CONTAINS(error_of([this] { load_csv(write("n.csv", "1,2\n0,n/a\n")); }), "missing value ('n/a')");
  LoadOptions bad;
  bad.categorical = o.categorical;
  bad.impute = {{"color", "green"}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, bad); }),
                  "--impute color=green: 'green' is not one of the column's categories");
  bad.impute = {{"age", "old"}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, bad); }), "--impute age=old: expected a finite number");
  bad.impute = {{"y", "0"}};
  EXPECT_CONTAINS(error_of([&] { load_csv(path, bad); }), "labels are never imputed");
}

TEST_F(CsvTableTest, QuotedFields) {
  const Dataset d = load_csv(write("q.csv", "\"y\",\"a, b\"\n\"1\", \"2.5\"\n0,3\n"));
  ASSERT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.dense()(0, 0), 2.5);
  LoadOptions o;
  o.categorical = {{"a, b", {"say \"hi\"", "x"}}};
  const Dataset c = load_csv(write("c.csv", "y,\"a, b\"\n1,\"say \"\"hi\"\"\"\n0,x\n"), o);
  EXPECT_EQ(c.dense(), RowMatrix((RowMatrix(2, 2) << 1, 0, 0, 1).finished()));
  EXPECT_CONTAINS(error_of([this] { load_csv(write("u.csv", "1,\"2\n")); }),
                  "line 1: a quoted field has no closing quote");
  EXPECT_CONTAINS(error_of([this] { load_csv(write("t.csv", "1,\"2\"x\n")); }),
                  "text after a quoted field's closing quote");
}

// The loader says which of its features are one-hot (the CLI's flags for the
// public box [0, 1], scale_public_boxes_test.cpp).
TEST_F(CsvTableTest, TheLoaderNamesItsOneHotFeatures) {
  const std::string path = write("c.csv", "size,y,color,w\n2,1,red,0.5\n3,0,blue,1\n4,1,green,1\n");
  LoadOptions o;
  o.label_column = "y";
  o.weights_column = "w";
  o.categorical = {{"color", {"red", "green", "blue"}}};
  std::vector<bool> one_hot;
  const Dataset d = load_csv(path, o, &one_hot);
  ASSERT_EQ(d.cols(), 4);
  EXPECT_EQ(one_hot, (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(d.dense(), load_csv(path, o).dense());
}

// A spreadsheet's "CSV UTF-8" starts with a byte-order mark; the label is
// then still found by its header name, and a file without a header still
// starts with a number. A ';'- or tab-separated file is named as such in one
// line (it read as one column before).
TEST_F(CsvTableTest, SpreadsheetExportsByteOrderMarkAndOtherSeparators) {
  LoadOptions by_name;
  by_name.label_column = "y";
  const Dataset named = load_csv(write("bom.csv", "\xEF\xBB\xBFy,x\n1,0.5\n0,2\n"), by_name);
  EXPECT_EQ(named.labels(), Vec((Vec(2) << 1, 0).finished()));
  EXPECT_EQ(named.dense(), RowMatrix((RowMatrix(2, 1) << 0.5, 2).finished()));
  const Dataset plain = load_csv(write("bom_records.csv",
                                       "\xEF\xBB\xBF"
                                       "1,0.5\n0,2\n"),
                                 LoadOptions{});
  EXPECT_EQ(plain.rows(), 2u);
  EXPECT_EQ(plain.labels(), Vec((Vec(2) << 1, 0).finished()));
  for (const auto& [text, name] :
       {std::pair<std::string, std::string>{"y;x\n1;0,5\n0;2\n", "semicolons"}, {"y\tx\n1\t0.5\n0\t2\n", "tabs"}}) {
    const std::string path = write("sep.csv", text);
    for (const bool labeled : {true, false}) {
      LoadOptions o;
      o.labeled = labeled;
      EXPECT_EQ(error_of([&] { load_csv(path, o); }),
                "CSV file " + path + " line 1: the fields are separated by commas, and this line has none but " + name +
                    ": save the table with commas between fields (and a '.' decimal mark)");
    }
  }
}

// A feature column with no name in the header line (pandas' to_csv writes its
// index so) is noted for the run's warnings; named columns, an unnamed label
// column and a file without a header line give no note.
TEST_F(CsvTableTest, AnUnnamedFeatureColumnIsNoted) {
  LoadOptions o;
  o.label_column = "y";
  std::vector<bool> one_hot;
  CsvNotes notes;
  const std::string indexed = write("indexed.csv", ",y,x\n0,1,0.5\n1,0,2\n");
  const Dataset d = load_csv(indexed, o, &one_hot, &notes);
  EXPECT_EQ(d.cols(), 2u);  // read as it is: the index is a feature
  ASSERT_EQ(notes.warnings.size(), 1u);
  EXPECT_EQ(notes.warnings[0], "CSV file " + indexed +
                                   ": column 0 (0-based) has no name in the header line and is read as a feature; a "
                                   "table's index that pandas' to_csv wrote (without index=False) is no feature: save "
                                   "the table without it");
  load_csv(write("named.csv", "i,y,x\n0,1,0.5\n1,0,2\n"), o, &one_hot, &notes);
  EXPECT_TRUE(notes.warnings.empty());
  LoadOptions header;
  header.header = true;
  load_csv(write("label.csv", ",x\n1,0.5\n0,2\n"), header, &one_hot, &notes);
  EXPECT_TRUE(notes.warnings.empty());
  LoadOptions fill;
  fill.impute_zero = true;
  load_csv(write("plain.csv", "1,,0.5\n0,2,2\n"), fill, &one_hot, &notes);
  EXPECT_TRUE(notes.warnings.empty());
}

// Labels read from the default first column: the notes say which column that
// was and how another is picked (for a refusal of the labels), and warn where
// another column is named like a label (a regression would fit the wrong
// target silently); the loader's own refusals of a label say it too. None of
// it where the label column was chosen.
TEST_F(CsvTableTest, LabelsFromTheDefaultColumnSaySo) {
  std::vector<bool> one_hot;
  CsvNotes notes;
  const std::string last = write("last.csv", "age,bmi,Target\n50,30,151\n20,22,75\n");
  load_csv(last, {}, &one_hot, &notes);
  const std::string read = "the labels were read from column 0, 'age' (the first column, the default)";
  EXPECT_EQ(notes.label_origin,
            read + ", and column 'Target' is named like a label: --label Target reads them from it");
  ASSERT_EQ(notes.warnings.size(), 1u);
  EXPECT_EQ(notes.warnings[0], "CSV file " + last + ": " + notes.label_origin +
                                   " (--label 0 keeps the first column and this warning away)");
  for (const char* chosen : {"0", "Target", "2"}) {
    LoadOptions o;
    o.label_column = chosen;
    load_csv(last, o, &one_hot, &notes);
    EXPECT_TRUE(notes.warnings.empty() && notes.label_origin.empty()) << chosen;
  }
  LoadOptions keywords;
  keywords.keyword_words = true;
  load_csv(write("spaced.csv", "mean radius,x,is class\n1,2,0\n"), keywords, &one_hot, &notes);
  EXPECT_EQ(notes.label_origin,
            "the labels were read from column 0, 'mean radius' (the first column, the default): "
            "label='NAME' (or a 0-based index) reads them from another column");
  EXPECT_TRUE(notes.warnings.empty());
  load_csv(write("bare.csv", "1,2\n0,3\n"), {}, &one_hot, &notes);
  EXPECT_EQ(notes.label_origin,
            "the labels were read from column 0 (the first column, the default): --label INDEX (0-based) reads them "
            "from another column");
  const std::string names = write("names.csv", "name,x,y\nbob,1,0\n");
  EXPECT_EQ(
      error_of([&] { load_csv(names, {}); }),
      "CSV file " + names +
          ": a label in column 'name' is not a finite number; named classes must be declared "
          "(--classes a,b,c), every label then one of them; the labels were read from column 0, 'name' (the first "
          "column, the default), and column 'y' is named like a label: --label y reads them from it");
  LoadOptions declared;  // a column named like a label but declared a categorical one is none
  declared.categorical = {{"class", {"a", "b"}}};
  load_csv(write("declared.csv", "x,class\n1,a\n"), declared, &one_hot, &notes);
  EXPECT_TRUE(notes.warnings.empty());
  EXPECT_EQ(notes.label_origin,
            "the labels were read from column 0, 'x' (the first column, the default): --label "
            "NAME (or a 0-based index) reads them from another column");
  LoadOptions unlabeled;
  unlabeled.labeled = false;
  load_csv(last, unlabeled, &one_hot, &notes);
  EXPECT_TRUE(notes.warnings.empty() && notes.label_origin.empty());
}

// pandas' to_csv writes a bool column as True / False: read as 1 / 0 (any
// case), as dpsosp.encode_table reads a bool, in a feature or a numeric
// label column; a first record holding one is not taken for a header line,
// as one holding another word is (docs/data-formats.md, "Header line").
TEST_F(CsvTableTest, TrueAndFalseAreOneAndZero) {
  LoadOptions by_name;
  by_name.label_column = "y";
  const Dataset named = load_csv(write("bools.csv", "flag,y,x\nFalse,True,0.5\nTRUE,false,2\n"), by_name);
  EXPECT_EQ(named.labels(), Vec((Vec(2) << 1, 0).finished()));
  EXPECT_EQ(named.dense(), RowMatrix((RowMatrix(2, 2) << 0, 0.5, 1, 2).finished()));
  const Dataset plain = load_csv(write("bools_records.csv", "1,true,0.5\n0,False,2\n"), LoadOptions{});
  ASSERT_EQ(plain.rows(), 2u);
  EXPECT_EQ(plain.dense(), RowMatrix((RowMatrix(2, 2) << 1, 0.5, 0, 2).finished()));
  EXPECT_CONTAINS(error_of([&] { load_csv(write("yes.csv", "1,yes,0.5\n0,no,2\n"), LoadOptions{}); }),
                  "line 2: non-numeric value 'no' in column 'yes'");
}

}  // namespace
}  // namespace dpsosp
