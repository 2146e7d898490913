/* memfold.h - equal lessons folded into one (issue 69): a memory holds a
 * lesson once, with the evidence for it counted, not once per run that
 * learnt it again */
#ifndef AO_MEMFOLD_H
#define AO_MEMFOLD_H

#include <cjson/cJSON.h>

/* How many folded items an item names in evidence_ids at most; past that
 * its evidence count is kept but no longer exact under a second fold. */
#define AO_MEMORY_EVIDENCE_IDS 64

/* Are a and b the same lesson?  The same task, target and direction, and
 * the same step: the same knob move (the builtin model's move: knob, from,
 * to), or the same pair of kernels (slow_sha256 and fast_sha256), or the
 * same before and after snippets.  1 or 0. */
int ao_memory_same_lesson(const cJSON *a, const cJSON *b);

/* The one item that stands for both (newer learnt after older): the
 * better-supported of the two (a head-to-head interval over none, then the
 * narrower one, relative to its speedup; then the smaller spread; then the
 * newer), with the newer's created_at, evidence_ids the union of both's
 * (an item without them stands for its own id) and evidence their count.
 * Folding the same items again gives the same item. */
cJSON *ao_memory_merge(const cJSON *newer, const cJSON *older);

/* Fold every group of equal lessons of items (newest first) into one, at
 * the place of its newest: the count of items that went. */
int ao_memory_fold(cJSON *items);

/* How many pairs of kernels taught an item (1 without an evidence count). */
int ao_memory_evidence(const cJSON *item);

#endif
