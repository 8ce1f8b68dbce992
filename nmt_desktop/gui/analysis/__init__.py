"""The Analysis tab (`panel.AnalysisPanel`): one module per view, `job.JobView` for the views that run work."""
