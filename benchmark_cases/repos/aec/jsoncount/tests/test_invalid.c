#include <assert.h>
#include "jsoncount.h"
int main(void) {
  assert(jsoncount_keys("{oops") == -1);
  assert(jsoncount_depth("") == -1);
  return 0;
}
