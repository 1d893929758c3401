using System.Runtime.CompilerServices;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Rql;

/// <summary>A parsed RQL query. Every node keeps the position where it starts, for errors found later (planning, parameters).</summary>
public sealed record RqlQuery(
    RqlSource From,
    RqlExpression? Where,
    IReadOnlyList<RqlOrder> OrderBy,
    IReadOnlyList<RqlProjection> Select,
    IReadOnlyList<RqlPath> Include,
    RqlValue? Limit,
    RqlValue? Offset)
{
    /// <summary>The <c>filter</c> clause: tested on each document the index (or the scan) finds, before paging.</summary>
    public RqlExpression? Filter { get; init; }

    /// <summary>The <c>filter_limit</c>: the most documents the filter examines (null: all).</summary>
    public RqlValue? FilterLimit { get; init; }

    /// <summary><c>include timings()</c>: the answer carries how long each stage took.</summary>
    public bool IncludeTimings { get; init; }

    /// <summary><c>include revisions('2026-01-02T00:00:00.0000000Z')</c> or <c>revisions('ContractChangeVector')</c>: revisions answered under <c>RevisionIncludes</c>.</summary>
    public IReadOnlyList<RqlRevisionsInclude> IncludeRevisions { get; init; } = [];

    /// <summary>The <c>update { ... }</c> clause of a patch by query (<see cref="RqlUpdateClause"/>), or null.</summary>
    public RqlUpdate? Update { get; init; }

    /// <summary>
    /// The <c>group by</c> fields (empty: not a group-by query). A group-by query is answered by an
    /// auto map-reduce index: its <c>where</c> and <c>order by</c> apply to the reduce results.
    /// </summary>
    public IReadOnlyList<RqlPath> GroupBy { get; init; } = [];

    public bool IsGroupBy => GroupBy.Count > 0;
}

/// <summary>
/// One argument of <c>include revisions(...)</c>: a point in time (each result's newest revision at or
/// before it) or a path whose values in each result are change vectors of revisions.
/// </summary>
public sealed record RqlRevisionsInclude(DateTime? Before, DocumentPath? Path, int Position);

/// <summary><c>from Orders</c> or <c>from index 'Orders/Totals'</c>, with an optional alias.</summary>
public sealed record RqlSource(string Name, bool IsIndex, string? Alias, int Position);

/// <summary>A field path: <c>ShipTo.City</c>, <c>Lines[].Product</c> (a segment marked as walking an array).</summary>
public sealed record RqlPath(IReadOnlyList<RqlPathSegment> Segments, int Position)
{
    // Kept beside the path, not in it: a record's fields take part in its equality.
    private static readonly ConditionalWeakTable<RqlPath, DocumentPath> Walkers = new();

    /// <summary>
    /// The path as documents are read: its string form (<see cref="ToString"/>), split as an
    /// auto-index splits its fields, so a where, a projection and an include read what an index
    /// reads (a quoted name holding a <c>.</c> is two names here too). Made once per path.
    /// </summary>
    public DocumentPath DocumentPath => Walkers.GetValue(this, static path => DocumentPath.Parse(path.ToString()));

    public override string ToString() => string.Join('.', Segments.Select(s => s.Array ? s.Name + "[]" : s.Name));
}

public readonly record struct RqlPathSegment(string Name, bool Array);

/// <summary>What a comparison is about: a field, or the document's id (<c>id()</c>).</summary>
public sealed record RqlOperand(RqlPath? Path, int Position)
{
    public bool IsId => Path is null;

    public override string ToString() => Path?.ToString() ?? "id()";
}

/// <summary>A literal (string, number, boolean, null) or a <c>$parameter</c>.</summary>
public sealed record RqlValue(RqlValueKind Kind, string Text, int Position);

public enum RqlValueKind : byte
{
    String,
    Number,
    True,
    False,
    Null,
    Parameter,
}

public enum RqlComparisonOperator : byte
{
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// <summary>A node of a <c>where</c> clause.</summary>
public abstract record RqlExpression(int Position);

/// <summary><c>a and b</c>, <c>a or b</c>.</summary>
public sealed record RqlBinary(RqlExpression Left, bool IsAnd, RqlExpression Right, int Position) : RqlExpression(Position);

/// <summary><c>not a</c>.</summary>
public sealed record RqlNot(RqlExpression Operand, int Position) : RqlExpression(Position);

/// <summary><c>Field op value</c>.</summary>
public sealed record RqlComparison(RqlOperand Field, RqlComparisonOperator Operator, RqlValue Value, int Position) : RqlExpression(Position);

/// <summary><c>Field between low and high</c> (both ends included).</summary>
public sealed record RqlBetween(RqlOperand Field, RqlValue Low, RqlValue High, int Position) : RqlExpression(Position);

/// <summary><c>Field in (...)</c>, or <c>Field all in (...)</c>.</summary>
public sealed record RqlIn(RqlOperand Field, IReadOnlyList<RqlValue> Values, bool All, int Position) : RqlExpression(Position);

/// <summary><c>startsWith(f, v)</c>, <c>endsWith(f, v)</c>, <c>search(f, v[, and|or])</c>, <c>exists(f)</c>, <c>regex(f, pattern)</c>.</summary>
public sealed record RqlMethod(RqlMethodKind Method, RqlOperand Field, RqlValue? Value, bool SearchAll, int Position) : RqlExpression(Position);

public enum RqlMethodKind : byte
{
    StartsWith,
    EndsWith,
    Search,
    Exists,
    Regex,
}

/// <summary><c>proximity(search(f, 'a b'), n)</c>: the search's words at most <c>n</c> words apart, in order.</summary>
public sealed record RqlProximity(RqlMethod Search, int Distance, int Position) : RqlExpression(Position);

/// <summary><c>exact(Field = 'X')</c>: the comparison, case-sensitive.</summary>
public sealed record RqlExact(RqlExpression Inner, int Position) : RqlExpression(Position);

/// <summary>An <c>order by</c> key: a field (optionally typed <c>as long|double|alphaNumeric|string</c>), <c>score()</c> or <c>id()</c>.</summary>
public sealed record RqlOrder(RqlPath? Path, bool Descending, string? As, int Position, bool IsId = false)
{
    public bool IsScore => Path is null && !IsId;
}

/// <summary>
/// A <c>select</c> item: a field, optionally renamed; in a group-by query also <c>key()</c>,
/// <c>count()</c> or <c>sum(path)</c> (<see cref="Aggregate"/>). For those, <see cref="Path"/> is
/// the field of the reduce result the item reads: <c>Count</c>, the summed path, or the group-by
/// field (the first one for a composite <c>key()</c>, which reads them all).
/// </summary>
public sealed record RqlProjection(RqlPath Path, string? Alias, int Position)
{
    public RqlAggregate Aggregate { get; init; }

    /// <summary>The name the item has in each result: its alias, else the field it reads.</summary>
    public string Name => Alias ?? Path.ToString();
}

/// <summary>What a <c>select</c> item of a group-by query reads.</summary>
public enum RqlAggregate : byte
{
    /// <summary>A field (in a group-by query: a group-by field).</summary>
    None,

    /// <summary><c>key()</c>: the group-by value (an object of them for several fields).</summary>
    Key,

    /// <summary><c>count()</c>: how many entries the group has.</summary>
    Count,

    /// <summary><c>sum(path)</c>: the sum of a numeric path over the group's entries.</summary>
    Sum,
}
