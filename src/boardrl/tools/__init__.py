"""Developer tools that no pipeline stage runs: ``browser`` (look at the report and DVC's plots in headless
Chromium, ``make report-check``)."""
