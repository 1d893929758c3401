namespace Jackdaw.Server.Rql;

/// <summary>What a token of RQL is.</summary>
public enum RqlTokenKind : byte
{
    End,
    Identifier,
    String,
    Number,
    Parameter,
    OpenParen,
    CloseParen,
    OpenBracket,
    CloseBracket,
    Comma,
    Dot,
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// <summary>One token: its kind, its text (a string's value unescaped, a parameter's name) and where it starts.</summary>
public readonly record struct RqlToken(RqlTokenKind Kind, string Text, int Position)
{
    /// <summary>Whether this is the keyword <paramref name="keyword"/> (keywords compare case-insensitively).</summary>
    public bool Is(string keyword) => Kind == RqlTokenKind.Identifier && string.Equals(Text, keyword, StringComparison.OrdinalIgnoreCase);

    public override string ToString() => Kind switch
    {
        RqlTokenKind.End => "the end of the query",
        RqlTokenKind.String => $"the string '{Text}'",
        RqlTokenKind.Parameter => $"the parameter ${Text}",
        _ => $"'{Text}'",
    };
}
