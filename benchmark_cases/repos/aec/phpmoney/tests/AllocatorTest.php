<?php

declare(strict_types=1);

namespace PhpMoney\Tests;

use PhpMoney\Allocator;
use PhpMoney\Money;
use PHPUnit\Framework\TestCase;

final class AllocatorTest extends TestCase
{
    public function testSplitsEvenlyWithTheRemainderFirst(): void
    {
        $shares = array_map('strval', Allocator::allocate(Money::of('100', 'EUR'), [1, 1, 1]));
        $this->assertSame(['33.34 EUR', '33.33 EUR', '33.33 EUR'], $shares);
    }

    public function testSplitsByRatios(): void
    {
        $shares = array_map('strval', Allocator::allocate(Money::of('5', 'JPY'), [3, 7]));
        $this->assertSame(['2 JPY', '3 JPY'], $shares);
    }

    public function testLosesNothing(): void
    {
        $money = Money::of('0.05', 'USD');
        $total = Money::of('0', 'USD');
        foreach (Allocator::allocate($money, [3, 3, 3, 1]) as $share) {
            $total = $total->plus($share);
        }
        $this->assertTrue($total->equals($money));
    }

    public function testRefusesAnEmptyRatioList(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Allocator::allocate(Money::of('1', 'EUR'), []);
    }
}
