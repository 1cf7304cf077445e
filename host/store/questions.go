package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Question is a question a waiting call asks its principal (an approval,
// an elicitation), stored so that any replica can list and answer it.
// Body is the question as the host shows it (JSON); Answer is the first
// answer given, nil until then.
type Question struct {
	ID        string
	Kind      string
	Principal string
	// Replica is the replica whose call waits for the answer.
	Replica          string
	Body             json.RawMessage
	Created, Expires time.Time
	Answer           json.RawMessage
}

// PutQuestion stores q, unanswered. Body must be valid JSON; ID, Kind and
// Principal must be set.
func (s *Store) PutQuestion(ctx context.Context, q Question) error {
	if q.ID == "" || q.Kind == "" || q.Principal == "" {
		return errors.New("store: put question: id, kind and principal are required")
	}
	if !json.Valid(q.Body) {
		return fmt.Errorf("store: put question %q: the body is not valid JSON", q.ID)
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO questions (id, kind, principal, replica, body, created_at, expires_at, answer)
VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
		q.ID, q.Kind, q.Principal, q.Replica, string(q.Body), q.Created.UTC().UnixNano(), q.Expires.UTC().UnixNano())
	if err != nil {
		return fmt.Errorf("store: put question %q: %w", q.ID, diskFull(err))
	}
	return nil
}

// DeleteQuestion removes a question, answered or not; a missing one is
// no error.
func (s *Store) DeleteQuestion(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM questions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete question %q: %w", id, err)
	}
	return nil
}

const questionColumns = `id, kind, principal, replica, body, created_at, expires_at, answer`

func scanQuestion(sc interface{ Scan(...any) error }) (Question, error) {
	var q Question
	var body string
	var answer sql.NullString
	var created, expires int64
	if err := sc.Scan(&q.ID, &q.Kind, &q.Principal, &q.Replica, &body, &created, &expires, &answer); err != nil {
		return Question{}, err
	}
	q.Body = json.RawMessage(body)
	q.Created, q.Expires = time.Unix(0, created).UTC(), time.Unix(0, expires).UTC()
	if answer.Valid {
		q.Answer = json.RawMessage(answer.String)
	}
	return q, nil
}

// Questions returns principal's unanswered questions that have not
// expired, oldest first (an empty, non-nil slice when there is none).
// Expired questions (their replica died, or its timer has not run yet) are
// not listed, and are deleted on the way.
func (s *Store) Questions(ctx context.Context, principal string) ([]Question, error) {
	now := s.now().UTC().UnixNano()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM questions WHERE expires_at <= ?`, now); err != nil {
		s.logger.Warn("deleting expired questions", "error", err)
	}
	return s.queryQuestions(ctx, "questions", `SELECT `+questionColumns+` FROM questions
WHERE principal = ? AND answer IS NULL AND expires_at > ? ORDER BY created_at, id`, principal, now)
}

// queryQuestions runs query and returns its rows as questions (an empty,
// non-nil slice when there is none); what names it in errors.
func (s *Store) queryQuestions(ctx context.Context, what, query string, args ...any) ([]Question, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	out := []Question{}
	for rows.Next() {
		q, err := scanQuestion(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

// Question returns the question id, answered or not, expired or not, or
// ErrNotFound. It does not check the principal: it is for the replica
// whose call waits (the answer's owner), and for checks before
// AnswerQuestion, which does.
func (s *Store) Question(ctx context.Context, id string) (Question, error) {
	q, err := scanQuestion(s.r.QueryRowContext(ctx, `SELECT `+questionColumns+` FROM questions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Question{}, ErrNotFound
	}
	if err != nil {
		return Question{}, fmt.Errorf("store: question %q: %w", id, err)
	}
	return q, nil
}

// AnswerQuestion records answer (valid JSON) as the answer to principal's
// question id. The first answer wins, atomically, also between replicas:
// a question that is missing, another principal's, expired or already
// answered is ErrNotFound.
func (s *Store) AnswerQuestion(ctx context.Context, principal, id string, answer json.RawMessage) error {
	if !json.Valid(answer) {
		return fmt.Errorf("store: answer question %q: the answer is not valid JSON", id)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE questions SET answer = ?
WHERE id = ? AND principal = ? AND answer IS NULL AND expires_at > ?`, string(answer), id, principal, s.now().UTC().UnixNano())
	if err != nil {
		return fmt.Errorf("store: answer question %q: %w", id, diskFull(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: answer question %q: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// OpenQuestions returns every unanswered question that has not expired,
// of every principal, oldest first: for the sweep of questions whose
// replica died (an empty, non-nil slice when there is none).
func (s *Store) OpenQuestions(ctx context.Context) ([]Question, error) {
	return s.queryQuestions(ctx, "open questions", `SELECT `+questionColumns+` FROM questions
WHERE answer IS NULL AND expires_at > ? ORDER BY created_at, id`, s.now().UTC().UnixNano())
}
