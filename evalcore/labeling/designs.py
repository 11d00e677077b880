"""The designs a campaign's queue can follow and their names, in a module of their own: the command line's help
lists them without importing numpy, pandas or scipy (:mod:`.queue` draws the queues and re-exports both names)."""

DESIGNS = ("srs", "proportional", "neyman", "active", "ppi")
DESIGN_NAMES = {"srs": "simple random sample", "proportional": "stratified, proportional allocation",
                "neyman": "stratified, Neyman allocation", "active": "active sampling (by the proxy's uncertainty)",
                "ppi": "simple random sample with PPI++ (AI judge)"}
#: a comparison campaign's designs (:mod:`.difference` plans them and re-exports both names)
COMPARISON_DESIGNS = ("srs", "disagreement", "neyman")
COMPARISON_DESIGN_NAMES = {"srs": "a random paired sample of the shared examples",
                           "disagreement": "only the examples where the models' outputs differ, at random",
                           "neyman": "only the examples where the models' outputs differ, stratified by the models' "
                                     "confidences or an AI judge's verdicts (Neyman allocation)"}
