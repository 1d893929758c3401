namespace Jackdaw.Client;

/// <summary>How the words of one full-text search combine.</summary>
public enum SearchOperator
{
    /// <summary>A document matches when it has any of the words.</summary>
    Or,

    /// <summary>A document matches only when it has all of the words.</summary>
    And,
}
