namespace Jackdaw.Client;

/// <summary>How an index field's values are indexed.</summary>
public enum FieldIndexing
{
    /// <summary>The whole value, case-insensitively: equality, ranges, sorting.</summary>
    Default,

    /// <summary>The whole value as it is: a case-sensitive match.</summary>
    Exact,

    /// <summary>The words of the value, for <c>Search</c>.</summary>
    Search,

    /// <summary>Not indexed; it can still be stored for projections.</summary>
    No,
}
