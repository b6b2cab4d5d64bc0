#include <assert.h>
#include "jsoncount.h"
int main(void) {
  assert(jsoncount_keys("{\"a\": 1, \"b\": {\"c\": [ {\"d\": 2} ]}}") == 4);
  assert(jsoncount_keys("[]") == 0);
  return 0;
}
