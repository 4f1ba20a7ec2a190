#pragma once

namespace clustercert::controller::report {

// The HTML report's stylesheet, inlined into its <style> element: system
// fonts only, light colours that print, wide tables scroll inside their box.
const char* ReportStyleSheet();

}  // namespace clustercert::controller::report
