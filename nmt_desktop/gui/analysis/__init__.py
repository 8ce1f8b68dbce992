"""The Analysis tab (`panel.AnalysisPanel`): one module per view, each an `analysis_view.AnalysisView` wired
only by its entry in `registry.VIEWS`; the views that run work are `gui/job_view.JobView`s."""
