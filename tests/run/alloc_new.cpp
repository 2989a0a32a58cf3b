// tests/run_alloc.sh: C++ allocations reach malloc through libstdc++'s
// operator new; the site is the program's code, not libstdc++.
#include <cstdio>
#include <vector>

int main()
{
    double sum = 0;
    for (int input = 0; input < 2; input++) {
        std::vector<double> v((2 + input) << 17, 1.0);
        for (double x : v)
            sum += x;
    }
    std::printf("%.1f\n", sum);
    return 0;
}
