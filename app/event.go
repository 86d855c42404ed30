package app

import "h3studio/engine"

// Event is the engine's progress report as a JobEvent carries it. The
// aliases below let a front end read events through app, which is the only
// package it talks to; they are the engine's own types, not copies.
type Event = engine.Event

// The kinds of Event a front end tells apart.
const (
	EventProgress = engine.EventProgress
	EventStart    = engine.EventStart
	EventEnd      = engine.EventEnd
	EventDecision = engine.EventDecision
	EventWarning  = engine.EventWarning
	EventDone     = engine.EventDone
)
