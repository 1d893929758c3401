using Lucene.Net.Analysis;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// An analyzer that leaves <see cref="Gap"/> positions between the values of one field (the
/// elements of an array, the entries a map returns), so that a phrase or <c>proximity()</c> never
/// matches words of two different values, as the query evaluator treats each value on its own.
/// </summary>
internal sealed class ValueGapAnalyzer(Analyzer inner) : AnalyzerWrapper(PER_FIELD_REUSE_STRATEGY)
{
    /// <summary>More than any slop a query would ask for.</summary>
    public const int Gap = 10_000;

    protected override Analyzer GetWrappedAnalyzer(string fieldName) => inner;

    public override int GetPositionIncrementGap(string fieldName) => Gap;
}
