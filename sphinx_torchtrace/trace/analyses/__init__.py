"""What the model shows, worked out: statuses, graph breaks and what followed a failed
compile, recompile reasons, timings, provenance, what ranks logged alike, the overview's
figures.  Reads the model (``trace``'s own modules); reads no input and compares no runs."""
