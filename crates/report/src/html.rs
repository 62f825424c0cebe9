//! The self-contained HTML report: one section per seed document, inline SVG. (Filled in by the reproduce/report work.)
