// Package decimal owns exact DECIMAL(p,s) arithmetic with Apache Doris's
// decimalv3 semantics: a value is a 128-bit unscaled integer
// (arrow-go's decimal128.Num, the layout Arrow and the segment files use)
// read at the scale of its type, and p ≤ 38 digits.
//
// It gives, per value: text parsing with rounding (Parse, ParseLiteral),
// formatting (Format), rescaling (Rescale), + − × ÷ and % in the Doris
// result types (Arith, ResultType), exact comparison across scales (Cmp),
// conversions from and to integers, doubles and text, overflow checks
// (Fits), and the accumulator of sum and avg (Acc, SumType, AvgType). The
// SQL row executor and the vectorised kernels both call it, so that a
// DECIMAL expression gives the same digits on either path.
//
// Rounding is half away from zero everywhere a scale is reduced. Result
// precisions are capped at MaxPrecision; a result that needs more digits
// than its type has is reported (ok false or StatusOverflow), never wrapped
// or silently rounded.
//
// It must never import another package of this module but the root one
// (for its error sentinels), nor know about columns, files or SQL: it sits
// low in the import graph so that schema, sql, load and exec can all use
// it. arrow-go's decimal128 arithmetic wraps on overflow and its text and
// float conversions round through big.Float, so this package does its own
// overflow checks and digit-exact parsing, and its tests check every
// operation against math/big.
package decimal
