"""The mathematics of every model, on arrays: numpy and scipy only.

An engine imports nothing from :mod:`models`, pandas, PyMC, PyTensor, ArviZ or matplotlib
(``tests/inference/engines/test_isolation.py`` checks it in a fresh interpreter), so it can be
used and tested on its own. Modules are named after the mathematics:

- :mod:`.linear_gaussian`: Gaussian and Normal-Inverse-Gamma linear posteriors;
- :mod:`.counts`: Beta/Dirichlet posteriors of counts;
- :mod:`.naive_bayes_stats`: naive-Bayes sufficient statistics and posteriors;
- :mod:`.mixture_em`: EM for Gaussian mixtures (ML and MAP);
- :mod:`.sbl`: sparse Bayesian learning (ARD) by type-II maximum likelihood;
- :mod:`.decisions`: minimum-risk Bayes decisions and Bayes' rule;
- :mod:`.networks`: discrete Bayesian networks (CPT posteriors, exact inference,
  d-separation); :mod:`.network_em`: their CPTs by EM when cells are missing;
- :mod:`.one_dependence`: SPODE, AODE and TAN from mergeable pair counts;
- :mod:`.dist`: light distribution objects handed out as oracles;
- :mod:`.blas_threads`: BLAS held to one thread around loops of small factorisations;
- :mod:`.errors`: the engines' exceptions.
"""
