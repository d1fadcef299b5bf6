/*
 * envs.h - the public API of envs/ for front ends (cli/, tests/frontend/example.c): one
 * include for all of it. The API itself is declared in the headers of its sub-areas, each
 * written as its manual:
 *
 *   prefix.h    linking into a prefix, conda-meta/ records and history, recovery, locks, pip
 *   txn.h       the transaction, channels of a command, environment lockfiles, rename
 *   activate.h  activation, environment variables, `menv run`, shell hook, completion
 *   smoke.h     the smoke check and `menv doctor`
 *   registry.h  the environment registry, env list, -n/-p to a prefix, info, clean
 *
 * Files inside envs/ include only the sub-area headers they use, not this one; a front end
 * includes this umbrella because it calls into every sub-area, and one include keeps it
 * simple.
 */
#ifndef MENV_ENVS_H
#define MENV_ENVS_H

#include "activate.h"
#include "prefix.h"
#include "registry.h"
#include "smoke.h"
#include "txn.h"

#endif
