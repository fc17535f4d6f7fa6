"""Reading inputs into the model: which format a path is (:mod:`.formats`), TORCH_TRACE logs
and folders (:mod:`.loader`, :mod:`.builder`, :mod:`.cache`), TORCH_LOGS text logs,
TORCH_COMPILE_DEBUG folders, and traces captured by running a program (:mod:`.capture`).
Every command and directive reads every kind through :mod:`.loading`."""
