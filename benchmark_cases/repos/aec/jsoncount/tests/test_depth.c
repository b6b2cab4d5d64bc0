#include <assert.h>
#include "jsoncount.h"
int main(void) {
  assert(jsoncount_depth("1") == 0);
  assert(jsoncount_depth("{\"a\": [[1]]}") == 3);
  return 0;
}
