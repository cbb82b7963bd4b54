"""Tables, plots and the HTML report of a run and the comparison of runs."""
