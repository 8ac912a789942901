/* Moved to common/kubeclient.h (the rebalancer uses it too); this name stays so
 * that the scorer's files and tests that include "kube/kubeclient.h" need no change. */
#include "common/kubeclient.h"
