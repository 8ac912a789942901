/* Moved to common/json.h (the rebalancer uses it too); this name stays so
 * that the scorer's files and tests that include "parse/json.h" need no change. */
#include "common/json.h"
