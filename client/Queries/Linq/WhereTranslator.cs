using System.Collections;
using System.Linq.Expressions;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Translates the body of a <c>Where</c> predicate into an RQL condition. Fields come from
/// <see cref="FieldPathResolver"/>; every constant and captured value becomes a parameter
/// (<c>$p0</c>) except <c>null</c> and the <c>true</c>/<c>false</c> of a bare boolean member.
/// Parts that need no document (<c>filter == null</c>) are decided on the client.
/// </summary>
internal sealed class WhereTranslator(FieldPathResolver fields, QueryParameterList parameters)
{
    public Condition Translate(Expression expression)
    {
        if (expression.Type == typeof(bool) && ExpressionValues.IsEvaluable(expression))
        {
            return Condition.Constant(ExpressionValues.Evaluate(expression) is true);
        }

        switch (expression)
        {
            case BinaryExpression { NodeType: ExpressionType.AndAlso or ExpressionType.And } both when both.Type == typeof(bool):
                return Condition.And(Translate(both.Left), Translate(both.Right));
            case BinaryExpression { NodeType: ExpressionType.OrElse or ExpressionType.Or } either when either.Type == typeof(bool):
                return Condition.Or(Translate(either.Left), Translate(either.Right));
            case UnaryExpression { NodeType: ExpressionType.Not } negation when negation.Type == typeof(bool):
                return IsBooleanField(negation.Operand, out var negated)
                    ? Condition.Atom(negated.ToRql() + " = false")
                    : Condition.Not(Translate(negation.Operand));
            case BinaryExpression binary when ComparisonOperator(binary.NodeType) is not null:
                return Compare(binary.NodeType, binary.Left, binary.Right, binary);
            case MethodCallExpression call:
                return TranslateCall(call);
            case MemberExpression { Member.Name: "HasValue" } hasValue when hasValue.Expression is { } nullable && Nullable.GetUnderlyingType(nullable.Type) is not null:
                return Condition.Atom(fields.Resolve(nullable, "HasValue") + " != null");
            case UnaryExpression { NodeType: ExpressionType.Convert } convert when convert.Type == typeof(bool):
                return Translate(convert.Operand);
        }

        if (IsBooleanField(expression, out var flag))
        {
            return Condition.Atom(flag.ToRql() + " = true");
        }

        throw new NotSupportedException($"The condition '{expression}' ({expression.NodeType}) cannot be translated to RQL. Jackdaw translates ==, !=, <, <=, >, >=, &&, ||, !, StartsWith, EndsWith, Contains and Any over document fields.");
    }

    private bool IsBooleanField(Expression expression, out FieldPath path)
    {
        path = FieldPath.Root;
        return FieldPathResolver.FieldType(expression) == typeof(bool) && fields.TryResolve(expression, out path) && !path.IsRoot && !path.IsId;
    }

    private Condition Compare(ExpressionType op, Expression left, Expression right, Expression whole)
    {
        // x.Name.CompareTo("b") > 0 and string.Compare(x.Name, "b") > 0 mean x.Name > "b".
        if (AsCompareCall(left) is var (a, b) && ExpressionValues.IsEvaluable(right) && ExpressionValues.Evaluate(right) is 0)
        {
            return Compare(op, a, b, whole);
        }

        if (ExpressionValues.IsEvaluable(left) && !ExpressionValues.IsEvaluable(right))
        {
            (left, right) = (right, left);
            op = Mirror(op);
        }

        if (!ExpressionValues.IsEvaluable(right))
        {
            throw new NotSupportedException($"The condition '{whole}' compares two fields of the document; RQL compares a field with a value.");
        }

        var field = fields.Resolve(left, "A comparison");
        var value = ValueFor(left, ExpressionValues.Evaluate(right));
        if (value is null)
        {
            return op switch
            {
                ExpressionType.Equal => Condition.Atom(field.ToRql() + " = null"),
                ExpressionType.NotEqual => Condition.Atom(field.ToRql() + " != null"),
                _ => throw new NotSupportedException($"The condition '{whole}' orders a field against null, which has no order."),
            };
        }

        return Condition.Atom($"{field.ToRql()} {ComparisonOperator(op)} {parameters.Add(value)}");
    }

    private Condition TranslateCall(MethodCallExpression call)
    {
        var method = call.Method;
        if (method.DeclaringType == typeof(string))
        {
            switch (method.Name)
            {
                case nameof(string.StartsWith) or nameof(string.EndsWith) when call.Object is { } target && call.Arguments is [var prefix] && prefix.Type == typeof(string):
                    var field = fields.Resolve(target, method.Name);
                    if (!ExpressionValues.IsEvaluable(prefix) || ExpressionValues.Evaluate(prefix) is not string text)
                    {
                        throw new NotSupportedException($"'{call}': {method.Name} takes a non-null string computed on the client.");
                    }

                    var function = method.Name == nameof(string.StartsWith) ? "startsWith" : "endsWith";
                    return Condition.Atom($"{function}({field.ToRql()}, {parameters.Add(text)})");
                case nameof(string.StartsWith) or nameof(string.EndsWith):
                    throw new NotSupportedException($"'{call}': only {method.Name}(string) is supported; RQL compares strings case-insensitively, without a culture or comparison option.");
                case nameof(string.Contains):
                    throw new NotSupportedException($"'{call}': string.Contains has no RQL form; use .Search(x => x.Field, \"words\") for words in a text, or StartsWith/EndsWith.");
                case nameof(string.Equals) when call.Object is { } self && call.Arguments is [var other] && other.Type == typeof(string):
                    return Compare(ExpressionType.Equal, self, other, call);
                case nameof(string.Equals) when call.Object is null && call.Arguments is [var first, var second] && second.Type == typeof(string):
                    return Compare(ExpressionType.Equal, first, second, call);
            }
        }

        if (method.Name == nameof(Equals) && call.Object is { } instance && call.Arguments is [var argument] && method.GetParameters()[0].ParameterType == instance.Type)
        {
            return Compare(ExpressionType.Equal, instance, argument, call);
        }

        if (AsContainsCall(call) is var (collection, item))
        {
            return Contains(collection, item, call);
        }

        if (method.DeclaringType == typeof(Enumerable) && method.Name == nameof(Enumerable.Any))
        {
            return Any(call);
        }

        throw new NotSupportedException($"The method {method.DeclaringType?.Name}.{method.Name} in '{call}' cannot be translated to RQL.");
    }

    /// <summary>
    /// <c>x.Tags.Contains(v)</c> matches documents whose array holds <c>v</c> (<c>Tags = $p0</c>);
    /// <c>list.Contains(x.Field)</c> matches documents whose field is in the list (<c>Field in ($p0)</c>, one array parameter).
    /// </summary>
    private Condition Contains(Expression collection, Expression item, Expression whole)
    {
        if (ExpressionValues.IsEvaluable(item) && fields.TryResolve(collection, out var array) && !array.IsRoot)
        {
            var value = ValueFor(collection, ExpressionValues.Evaluate(item), elementOf: true);
            return Condition.Atom(array.ToRql() + (value is null ? " = null" : " = " + parameters.Add(value)));
        }

        if (ExpressionValues.IsEvaluable(collection))
        {
            var field = fields.Resolve(item, "Contains");
            if (ExpressionValues.Evaluate(collection) is not IEnumerable values)
            {
                throw new NotSupportedException($"'{whole}': the list is null.");
            }

            var list = new List<object?>();
            foreach (var value in values)
            {
                list.Add(ValueFor(item, value));
            }

            return Condition.Atom($"{field.ToRql()} in ({parameters.Add(list)})");
        }

        throw new NotSupportedException($"'{whole}': Contains needs a document array and a client value (x.Tags.Contains(tag)) or a client list and a document field (ids.Contains(x.Id)).");
    }

    /// <summary><c>x.Lines.Any(l => l.Product == v)</c> → <c>Lines[].Product = $p0</c>: each comparison matches when any element does, as RavenDB's indexes answer it.</summary>
    private Condition Any(MethodCallExpression call)
    {
        if (call.Arguments is not [var source, var predicate] || FieldPathResolver.StripQuote(predicate) is not LambdaExpression { Parameters: [var element] } lambda)
        {
            throw new NotSupportedException($"'{call}': only Any with a predicate over a document array (x.Lines.Any(l => l.Product == p)) can be translated.");
        }

        var array = fields.Resolve(source, "Any");
        fields.Bind(element, array.AsArray());
        try
        {
            return Translate(lambda.Body);
        }
        finally
        {
            fields.Unbind(element);
        }
    }

    /// <summary>
    /// The value to send for a comparison with <paramref name="field"/>: an enum the compiler
    /// turned into its number is turned back, so the serializer writes it as documents store it.
    /// </summary>
    private static object? ValueFor(Expression field, object? value, bool elementOf = false)
    {
        var type = FieldPathResolver.FieldType(field);
        if (elementOf)
        {
            type = ElementType(type) ?? type;
            type = Nullable.GetUnderlyingType(type) ?? type;
        }

        if (value is null || value.GetType() == type)
        {
            return value;
        }

        if (type.IsEnum && value.GetType().IsPrimitive)
        {
            return Enum.ToObject(type, value);
        }

        if (type == typeof(char) && value is int code)
        {
            return (char)code;
        }

        return value;
    }

    private static Type? ElementType(Type collection) =>
        collection.IsArray ? collection.GetElementType()
        : collection.GetInterfaces().Append(collection).FirstOrDefault(i => i.IsGenericType && i.GetGenericTypeDefinition() == typeof(IEnumerable<>))?.GetGenericArguments()[0];

    /// <summary>
    /// The collection and item of a Contains call: <c>Enumerable.Contains(source, item)</c>, an
    /// instance <c>Contains(item)</c> of a collection, or C# 14's <c>MemoryExtensions.Contains</c>
    /// over an array converted to a span (what <c>array.Contains(x)</c> binds to now).
    /// </summary>
    private static (Expression Collection, Expression Item)? AsContainsCall(MethodCallExpression call)
    {
        var method = call.Method;
        if (method.Name != nameof(Enumerable.Contains) || method.DeclaringType == typeof(string))
        {
            return null;
        }

        if (method.DeclaringType == typeof(Enumerable) && call.Arguments is [var source, var item])
        {
            return (source, item);
        }

        if (method.DeclaringType == typeof(MemoryExtensions) && call.Arguments.Count >= 2 && (call.Arguments.Count == 2 || call.Arguments[2] is ConstantExpression { Value: null }))
        {
            var span = call.Arguments[0];
            if (span is MethodCallExpression { Method.Name: "op_Implicit", Arguments: [var array] })
            {
                return (array, call.Arguments[1]);
            }

            return null;
        }

        if (!method.IsStatic && call.Object is { } collection && call.Arguments is [var element] && typeof(IEnumerable).IsAssignableFrom(collection.Type))
        {
            return (collection, element);
        }

        return null;
    }

    private static (Expression Left, Expression Right)? AsCompareCall(Expression expression) => expression switch
    {
        MethodCallExpression { Method.Name: nameof(string.CompareTo), Object: { } left, Arguments: [var right] } => (left, right),
        MethodCallExpression { Method.Name: nameof(string.Compare), Object: null, Arguments: [var left, var right] } call when call.Method.DeclaringType == typeof(string) => (left, right),
        _ => null,
    };

    private static string? ComparisonOperator(ExpressionType type) => type switch
    {
        ExpressionType.Equal => "=",
        ExpressionType.NotEqual => "!=",
        ExpressionType.LessThan => "<",
        ExpressionType.LessThanOrEqual => "<=",
        ExpressionType.GreaterThan => ">",
        ExpressionType.GreaterThanOrEqual => ">=",
        _ => null,
    };

    private static ExpressionType Mirror(ExpressionType type) => type switch
    {
        ExpressionType.LessThan => ExpressionType.GreaterThan,
        ExpressionType.LessThanOrEqual => ExpressionType.GreaterThanOrEqual,
        ExpressionType.GreaterThan => ExpressionType.LessThan,
        ExpressionType.GreaterThanOrEqual => ExpressionType.LessThanOrEqual,
        _ => type,
    };
}
