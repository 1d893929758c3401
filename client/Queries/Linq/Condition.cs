namespace Jackdaw.Client.Queries.Linq;

/// <summary>How a condition's text binds, for parentheses when it is combined.</summary>
internal enum ConditionKind
{
    /// <summary>Known true on the client (<c>filter == null || ...</c> with no filter): it drops out.</summary>
    Always,

    /// <summary>Known false on the client.</summary>
    Never,

    Or,
    And,

    /// <summary>One comparison, method or <c>not</c>: binds tightest.</summary>
    Atom,
}

/// <summary>A translated piece of a <c>where</c> clause.</summary>
internal readonly record struct Condition(ConditionKind Kind, string Text)
{
    public static readonly Condition Always = new(ConditionKind.Always, "");

    public static readonly Condition Never = new(ConditionKind.Never, "");

    public static Condition Atom(string text) => new(ConditionKind.Atom, text);

    public static Condition Constant(bool value) => value ? Always : Never;

    public static Condition And(Condition left, Condition right)
    {
        if (left.Kind == ConditionKind.Never || right.Kind == ConditionKind.Never)
        {
            return Never;
        }

        if (left.Kind == ConditionKind.Always)
        {
            return right;
        }

        if (right.Kind == ConditionKind.Always)
        {
            return left;
        }

        return new(ConditionKind.And, Parenthesized(left) + " and " + Parenthesized(right));
    }

    public static Condition Or(Condition left, Condition right)
    {
        if (left.Kind == ConditionKind.Always || right.Kind == ConditionKind.Always)
        {
            return Always;
        }

        if (left.Kind == ConditionKind.Never)
        {
            return right;
        }

        if (right.Kind == ConditionKind.Never)
        {
            return left;
        }

        return new(ConditionKind.Or, left.Text + " or " + right.Text);
    }

    public static Condition Not(Condition operand) => operand.Kind switch
    {
        ConditionKind.Always => Never,
        ConditionKind.Never => Always,
        ConditionKind.Atom => Atom("not " + operand.Text),
        _ => Atom("not (" + operand.Text + ")"),
    };

    /// <summary>An <c>or</c> inside an <c>and</c> keeps its meaning only in parentheses.</summary>
    private static string Parenthesized(Condition condition) =>
        condition.Kind == ConditionKind.Or ? "(" + condition.Text + ")" : condition.Text;
}
