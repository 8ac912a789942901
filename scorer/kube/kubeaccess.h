/* Moved to common/kubeaccess.h (the rebalancer uses it too); this name stays so
 * that the scorer's files and tests that include "kube/kubeaccess.h" need no change. */
#include "common/kubeaccess.h"
